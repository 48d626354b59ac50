/**
 * A write into SunSpec model 124 through the Modbus proxy while battery control is on (issue 44
 * item 10, second half; docs/modbus-proxy.md "Writes"): the demo's simulated SunSpec inverter,
 * the proxy with `writes: allow`, a modbus-serial client that walks the SunSpec chain itself
 * (SunSpec Information Model Specification: 'SunS' at 40000, then each model's ID and length)
 * and writes one register inside model 124. The write is refused with exception 01, the register
 * keeps its value, and the log names the register written, not model 124's header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModbusRTU } from '../../src/modbus/modbus-serial.js';
import { demoSite, waitFor } from '../support/demo.js';
import { freePort } from '../support/free-port.js';
import { capturingLogger } from '../support/uplink.js';

describe('a write into SunSpec model 124 through the proxy, control on', () => {
  const captured = capturingLogger();
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    demo = await demoSite({
      log: captured.log,
      configure: (c) => {
        c.control.enabled = true;
        c.modbusProxy = [{ port, target: 'inverter', writes: 'allow', host: '127.0.0.1' }];
      },
    });
    await waitFor('inverter online', () => demo.daemon.site.devices.get('inverter')?.online);
  }, 60_000);
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('is refused with exception 01 and the log names the register written', { timeout: 60_000 }, async () => {
    const c = new ModbusRTU();
    c.on('error', () => undefined);
    await c.connectTCP('127.0.0.1', { port });
    c.setID(1);
    c.setTimeout(5000);
    try {
      const marker = (await c.readHoldingRegisters(40000, 2)).data;
      expect(Buffer.from(marker.flatMap((w) => [w >> 8, w & 0xff])).toString('latin1')).toBe('SunS');
      let header = 40002;
      let model124: number | undefined;
      for (let n = 0; n < 50 && model124 === undefined; n++) {
        const [id, length] = (await c.readHoldingRegisters(header, 2)).data as [number, number];
        if (id === 0xffff) break;
        if (id === 124) model124 = header;
        else header += 2 + length;
      }
      expect(model124, 'model 124 on the inverter').toBeDefined();
      // OutWRte, the discharge rate (SunSpec model 124's eleventh point): inside the model, not its first register
      const target = model124! + 2 + 10;
      const before = (await c.readHoldingRegisters(target, 1)).data[0];
      const err = await c.writeRegisters(target, [100]).then(
        () => null,
        (e: { modbusCode?: number }) => e,
      );
      expect(err?.modbusCode).toBe(1);
      expect((await c.readHoldingRegisters(target, 1)).data[0]).toBe(before);
      const refusal = captured.lines().find((l) => String(l.msg).startsWith('modbus proxy refused a write'));
      expect(refusal).toMatchObject({ address: target, count: 1 });
      expect(String(refusal?.msg)).toContain(`register ${target} is written by battery control`);
    } finally {
      await new Promise<void>((r) => c.close(() => r()));
    }
  });
});
