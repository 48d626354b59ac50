/** The Modbus TCP bus against the simulator's real TCP servers, with injected faults. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { TcpBus, type TcpBusOptions } from '../../src/modbus/tcp-bus.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { readRegisters } from '../../src/sim/registers.js';
import { SDM630 } from '../../src/sim/sdm630.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { waitFor } from '../support/demo.js';
import { collectWeakRefs } from '../support/gc.js';
import { failure } from './failure.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const SUNS = [0x5375, 0x6e53];

describe('Modbus TCP bus', () => {
  const sim = new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0);
  let servers: SimServers;
  const buses: TcpBus[] = [];
  const bus = (opts: Partial<TcpBusOptions> = {}) => {
    const b = new TcpBus({
      host: servers.meter.host,
      port: servers.meter.port,
      timeoutMs: 1000,
      minBackoffMs: 20,
      maxBackoffMs: 100,
      ...opts,
    });
    buses.push(b);
    return b;
  };

  beforeAll(async () => {
    servers = await startSimServers(sim, new ManualClock(T0));
  });
  afterEach(async () => {
    servers.faults.clear();
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });
  afterAll(async () => {
    await servers?.close();
  });

  it('reads input registers of the SDM630 and holding registers of the SunSpec meter behind one endpoint', async () => {
    const b = bus();
    expect(await b.readInput(1, 0, 80)).toEqual(readRegisters(sim.unit('meter', 1)!, 'input', 0, 80));
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
    expect(await failure(b.readHolding(7, 40000, 2))).toMatchObject({ kind: 'exception', exceptionCode: 11 });
    expect(await failure(b.readInput(2, 0, 2))).toMatchObject({ kind: 'exception', exceptionCode: 1 });
  });

  it('keeps no answer for as long as the connection lives', async () => {
    // each request used to race a promise that lives as long as the connection, and every race
    // left a reaction on it holding that request's answer: a healthy bus grew ~1 MB a minute.
    // modbus-serial itself keeps the last 256 transactions (their ids wrap at 256), so only the
    // answers older than that can be expected gone.
    const b = bus();
    const answers: WeakRef<number[]>[] = [];
    for (let i = 0; i < 300; i++) answers.push(new WeakRef(await b.readInput(1, 0, 80)));
    const old = answers.slice(0, 40);
    await collectWeakRefs(() => old.every((a) => a.deref() === undefined));
    expect(old.filter((a) => a.deref() !== undefined)).toHaveLength(0);
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
  });

  it('a socket reset mid-request is a connection error at once, not a timeout, and the next read reconnects', async () => {
    // a long timeout: were the reset missed, the request would end as a timeout instead
    const b = bus({ timeoutMs: 5000 });
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
    servers.faults.set('meter', 2, { kind: 'reset' }, 1);
    const e = await failure(b.readHolding(2, 40000, 2));
    expect(e.kind).toBe('connection');
    expect(e.message).toMatch(/closed the connection/);
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
  });

  it('a device that reboots fails with connection errors while it is down and is read again when it is back', async () => {
    const b = bus();
    expect(await b.readInput(1, SDM630.at.hz, 2)).toEqual(
      readRegisters(sim.unit('meter', 1)!, 'input', SDM630.at.hz, 2),
    );
    const reboot = servers.reboot('meter', 400);
    const e = await failure(b.readInput(1, SDM630.at.hz, 2));
    expect(e.kind).toBe('connection');
    await reboot;
    expect(
      await waitFor('read after the reboot', () => b.readInput(1, SDM630.at.hz, 2).catch(() => undefined)),
    ).toEqual(readRegisters(sim.unit('meter', 1)!, 'input', SDM630.at.hz, 2));
  });

  it('a silent unit behind a gateway backs off; the other unit is read every time', async () => {
    let now = 0;
    const b = bus({ timeoutMs: 100, backoff: { failuresBeforeBackoff: 2, minBackoffMs: 2000, now: () => now } });
    servers.faults.set('meter', 2, { kind: 'silent' });
    const sent2 = servers.faults.requests('meter', 2);
    const sent1 = servers.faults.requests('meter', 1);
    for (let round = 0; round < 10; round++, now += 1000) {
      const e = await failure(b.readHolding(2, 40000, 2));
      expect(e.kind).toBe('timeout');
      expect(await b.readInput(1, 0, 2)).toHaveLength(2);
    }
    // on the wire at 0 s and 1 s (then skipped 2 s), at 3 s (then 4 s), at 7 s (then 8 s)
    expect(servers.faults.requests('meter', 2) - sent2).toBe(4);
    expect(servers.faults.requests('meter', 1) - sent1).toBe(10);
    // three timeouts in a row replace the socket; the answers of unit 1 in between keep it
    expect(b.sent).toBe(14);
  });

  it("a guest's timeouts do not back the unit off for the gateway; a guest is answered from the gateway's own read", async () => {
    const b = bus({ timeoutMs: 100, backoff: { failuresBeforeBackoff: 1 } });
    const own = await b.readInput(1, 0, 80);
    const lane = b.guest(4);
    // within the poll period, a read inside the gateway's own block costs the device nothing
    const asked = servers.faults.requests('meter', 1);
    expect(await b.guestRead(lane, 'input', 1, 10, 4, 100, 60_000)).toEqual({
      registers: own.slice(10, 14),
      cached: true,
    });
    expect(servers.faults.requests('meter', 1)).toBe(asked);
    // unit 1 goes silent for guests' reads: five timeouts, yet the gateway's unit 1 is not backed off
    servers.faults.set('meter', 1, { kind: 'silent' }, 5);
    for (let i = 0; i < 5; i++)
      expect(await failure(b.guestRead(lane, 'input', 1, 200, 2, 100, 60_000).then((r) => r.registers))).toMatchObject({
        kind: 'timeout',
      });
    expect(b.backoff.timeoutsOf(1)).toBe(0);
    expect(await b.readInput(1, 0, 2)).toHaveLength(2);
    expect(b.guestSent).toBe(5);
    // and a unit the gateway sees silent is refused to guests without a request on the wire
    servers.faults.set('meter', 1, { kind: 'silent' }, 1);
    await failure(b.readInput(1, 0, 2));
    const before = servers.faults.requests('meter', 1);
    expect(await failure(b.guestRead(lane, 'input', 1, 200, 2, 100, 0).then((r) => r.registers))).toMatchObject({
      kind: 'timeout',
      skipped: true,
    });
    expect(servers.faults.requests('meter', 1)).toBe(before);
  });
});
