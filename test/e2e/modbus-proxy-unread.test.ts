/**
 * A Modbus proxy client that sends requests and never reads its socket (issue 44 item 10), its
 * receive buffer fixed at 4 KiB (support/deaf-client.ts): its answers fill the kernel's send
 * queue of the connection, a few MiB on Linux, before any byte waits in the gateway's process, so
 * before the fix it kept its slot and had answers sent to it for minutes (about 4 MiB, 15,000
 * full reads at the 100 requests a second a client gets; here: 'after 2048 full reads sent'
 * still not cut off). Now it is cut off once 64 KiB of its answers wait in the gateway, the
 * kernel's send queue counted (docs/modbus-proxy.md; about 300 answers here), and its slot is
 * free again; meanwhile a client that reads slowly (eight requests, then a pause before it reads
 * their answers) and an honest client on the other port are served, and sitegw's polls of the
 * one-connection device go on.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/main.js';
import { ModbusRTU } from '../../src/modbus/modbus-serial.js';
import type { ProxyPortStatus } from '../../src/proxy/proxy.js';
import { DeafClient } from '../support/deaf-client.js';
import { waitFor } from '../support/demo.js';
import { fc4Request, type ProxySite, startProxySite } from '../support/proxy-site.js';

/** an FC4 read of 125 registers at 12900, inside the SH10RT image (4989-13046): a 259-byte answer */
const FULL_READ = { address: 12900, quantity: 125, answerBytes: 7 + 2 + 250 };
/** 13023 battery level 654, 13024 SoH 985 (test/fixtures/devices/sungrow-sh10rt-v112.yaml) */
const LEVEL_SOH = { address: 13022, values: [654, 985] };
/**
 * full reads the deaf client may send before it must have been cut off: 530 KB of answers, an
 * eighth of what the kernel's buffers of one loopback connection took before the fix
 */
const BUDGET = 2048;

const readRequest = (tid: number) => fc4Request(tid, FULL_READ.address, FULL_READ.quantity);

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.on('error', () => undefined);
    s.once('error', reject);
  });
}

const answered = (p: ProxyPortStatus) => Object.values(p.answers).reduce((a, b) => a + b, 0);

describe('a Modbus proxy client that never reads', () => {
  let site: ProxySite;
  let daemon: Daemon;
  let device: ProxySite['device'];
  let ports: { deaf: number; other: number };
  const port = (n: number) => daemon.ctx.ops.status().modbusProxy.ports.find((p) => p.port === n)!;

  beforeAll(async () => {
    site = await startProxySite(2);
    ({ daemon, device } = site);
    ports = { deaf: site.ports[0]!, other: site.ports[1]! };
  }, 60_000);
  afterAll(async () => {
    await site?.stop();
  });

  it('is cut off with 64 KiB of answers waiting, its slot freed, while a slow reader and an honest client are served and polling goes on', {
    timeout: 90_000,
  }, async () => {
    let polled = 0;
    let pollFailed = 0;
    const off = daemon.ctx.bus.on('devicePolled', (e) => (e.ok ? polled++ : pollFailed++));
    const overrunsBefore = daemon.ctx.poller.overruns;
    let deafDone = false;

    // never reads, its receive buffer fixed at 4 KiB: sends full reads, at most four waiting at a
    // time (not a flood), until it is cut off
    const deaf = async () => {
      const c = await DeafClient.open(ports.deaf, FULL_READ.address, FULL_READ.quantity, 4096);
      try {
        while (c.sent < BUDGET && port(ports.deaf).ended.unread === 0) {
          const waiting = c.sent - answered(port(ports.deaf));
          if (waiting < 4 && !(await c.send(Math.min(4 - waiting, BUDGET - c.sent)))) break;
          await sleep(5);
        }
        return c.sent;
      } finally {
        deafDone = true;
        c.close();
      }
    };

    // reads slowly: eight requests, then a pause of a second and a half before it reads their answers
    const slowReader = async () => {
      const s = await connect(ports.other);
      let got = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
      });
      const rounds: number[] = [];
      try {
        for (let round = 0; !deafDone || round < 2; round++) {
          got = Buffer.alloc(0);
          s.pause();
          for (let i = 0; i < 8; i++) s.write(readRequest(round * 8 + i));
          await sleep(1500);
          s.resume();
          await waitFor(
            'the slow reader its eight answers',
            () => got.length >= 8 * FULL_READ.answerBytes || s.destroyed,
          );
          rounds.push(got.length / FULL_READ.answerBytes);
        }
        return { rounds, open: !s.destroyed };
      } finally {
        s.destroy();
      }
    };

    // an honest client of a real Modbus library, reading every 100 ms
    const honest = async () => {
      const c = new ModbusRTU();
      c.on('error', () => undefined);
      await c.connectTCP('127.0.0.1', { port: ports.other });
      c.setID(1);
      c.setTimeout(5000);
      const reads: number[][] = [];
      try {
        while (!deafDone || reads.length < 3) {
          reads.push((await c.readInputRegisters(LEVEL_SOH.address, 2)).data);
          await sleep(100);
        }
      } finally {
        await new Promise<void>((r) => c.close(() => r()));
      }
      return reads;
    };

    let result: [number, Awaited<ReturnType<typeof slowReader>>, number[][]];
    try {
      result = await Promise.all([deaf(), slowReader(), honest()]);
      const seen = polled;
      await waitFor('a poll after the clients', () => polled > seen);
    } finally {
      off();
    }
    const [sent, slow, reads] = result;

    const deafPort = port(ports.deaf);
    expect(deafPort.ended, `after ${sent} full reads sent`).toMatchObject({ unread: 1, flood: 0 });
    expect(sent).toBeLessThan(BUDGET);
    // its slot is free, and the port serves a new client
    await waitFor('the deaf client gone', () => port(ports.deaf).clients.length === 0);
    const fresh = new ModbusRTU();
    fresh.on('error', () => undefined);
    await fresh.connectTCP('127.0.0.1', { port: ports.deaf });
    fresh.setID(1);
    fresh.setTimeout(5000);
    const full = await fresh.readInputRegisters(FULL_READ.address, FULL_READ.quantity);
    await new Promise<void>((r) => fresh.close(() => r()));
    expect(full.data).toHaveLength(FULL_READ.quantity);

    // the slow reader got every answer of every round and was never cut off; the honest client its values
    expect(slow.open).toBe(true);
    expect(slow.rounds.length).toBeGreaterThanOrEqual(2);
    expect(slow.rounds).toEqual(slow.rounds.map(() => 8));
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(reads).toEqual(reads.map(() => LEVEL_SOH.values));
    const other = port(ports.other);
    expect(other.ended).toMatchObject({ unread: 0, flood: 0, idle: 0, garbage: 0 });
    expect(other.answers.failed + other.answers.refused + other.answers.exception).toBe(0);

    // sitegw's polls went on, none failed, none overran its period
    expect(polled).toBeGreaterThan(0);
    expect({ pollFailed, overruns: daemon.ctx.poller.overruns - overrunsBefore }).toEqual({
      pollFailed: 0,
      overruns: 0,
    });
    expect({ accepted: device.accepted, refused: device.refused }).toEqual({ accepted: 1, refused: 0 });
    const metrics = await daemon.ctx.ops.metrics.text();
    expect(metrics).toMatch(
      new RegExp(`sitegw_modbus_proxy_disconnects_total\\{[^}]*port="${ports.deaf}"[^}]*reason="unread"\\} 1`),
    );
  });
});
