/**
 * The Modbus proxy admits like the API port (issue 40 finding 6): before the fix one address
 * holding 8 idle connections kept mbpoll and every other client out (renewable every 5 minutes),
 * and with 8 addresses reconnecting a legitimate client got 2 of 30. Now an address has a share
 * of the port (4 of 8), a newcomer past it or on a full port makes an idle client give way, and
 * an honest client on another address reads the device on 10 of 10 fresh connections while
 * eight addresses keep reopening idle connections.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/main.js';
import { fc4Request, type ProxySite, startProxySite } from '../support/proxy-site.js';

const HOLDERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const HONEST = '127.0.0.20';

/** an FC4 read of 5000 (Sungrow's device type code), one register */
const readRequest = (tid: number) => fc4Request(tid, 4999, 1);

/** One read on a fresh connection from `addr`: true when its answer comes within 5 s. */
function honestRead(port: number, addr: string, tid: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: addr });
    const t = setTimeout(() => end(false), 5000);
    const end = (ok: boolean) => {
      clearTimeout(t);
      s.destroy();
      resolve(ok);
    };
    s.on('error', () => end(false));
    s.on('close', () => end(false));
    s.on('data', (d: Buffer) => end(d.length >= 9 && d.readUInt16BE(0) === tid && d[7] === 4));
    s.once('connect', () => s.write(readRequest(tid)));
  });
}

describe('attack: idle holders on the Modbus proxy port', () => {
  let site: ProxySite;
  let daemon: Daemon;
  let port: number;
  beforeAll(async () => {
    site = await startProxySite();
    daemon = site.daemon;
    port = site.ports[0]!;
  }, 60_000);
  afterAll(async () => {
    await site?.stop();
  });

  it('one address holding 8 idle connections: an honest client on another address still reads', {
    timeout: 30_000,
  }, async () => {
    const held = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect({ port, host: '127.0.0.1', localAddress: HOLDERS[0] }, () => resolve(s));
            s.on('error', () => undefined);
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    const ok = await honestRead(port, HONEST, 1);
    const clients = daemon.ctx.ops.status().modbusProxy.ports[0]!.clients;
    for (const s of held) s.destroy();
    expect(ok, 'the honest read').toBe(true);
    expect(clients.filter((c) => c.address === HOLDERS[0]!).length).toBeLessThanOrEqual(4);
  });

  it('eight addresses reopening idle connections: the honest client reads on 10 of 10 fresh connections', {
    timeout: 60_000,
  }, async () => {
    let running = true;
    const open = new Set<net.Socket>();
    const hold = (addr: string) => {
      if (!running) return;
      const s = net.connect({ port, host: '127.0.0.1', localAddress: addr });
      open.add(s);
      s.on('error', () => undefined);
      s.once('close', () => {
        open.delete(s);
        setTimeout(() => hold(addr), 5);
      });
    };
    for (const a of HOLDERS) for (let i = 0; i < 4; i++) hold(a);
    const results: boolean[] = [];
    try {
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 10; i++) results.push(await honestRead(port, HONEST, 100 + i));
    } finally {
      running = false;
      for (const s of open) s.destroy();
    }
    expect(results.filter(Boolean).length, JSON.stringify(results)).toBe(10);
  });
});
