/**
 * The RTU bus against the simulator's RTU server (modbus-serial ServerSerial, an independent
 * implementation of the framing) on the other end of a socat pty pair, and through a
 * transparent serial server (socat tcp-listen ↔ pty) for RTU over TCP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SerialLink, SocketLink } from '../../src/modbus/byte-link.js';
import { crc16 } from '../../src/modbus/crc16.js';
import { RtuBus, type RtuBusOptions } from '../../src/modbus/rtu-bus.js';
import { wireTimeMs } from '../../src/modbus/rtu-timing.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { readRegisters } from '../../src/sim/registers.js';
import { type SimRtuServer, startSimRtuServer } from '../../src/sim/rtu-server.js';
import { SDM630 } from '../../src/sim/sdm630.js';
import { SimSite } from '../../src/sim/site.js';
import { waitFor } from '../support/demo.js';
import { HAVE_SOCAT, type PtyPair, ptyPair, serialServer } from '../support/socat.js';
import { failure } from './failure.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const SUNS = [0x5375, 0x6e53];

function simSite(): SimSite {
  return new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0);
}

/** what the simulator's registers hold now, read in memory */
const expected = (sim: SimSite, unitId: number, fn: 'holding' | 'input', address: number, n: number) =>
  readRegisters(sim.unit('meter', unitId)!, fn, address, n);

/** a read answer as a device would frame it, CRC low byte first */
function answerFrame(unitId: number, fc: number, registers: number[]): Buffer {
  const b = Buffer.alloc(3 + 2 * registers.length + 2);
  b[0] = unitId;
  b[1] = fc;
  b[2] = 2 * registers.length;
  registers.forEach((r, i) => b.writeUInt16BE(r, 3 + 2 * i));
  b.writeUInt16LE(crc16(b, 0, b.length - 2), b.length - 2);
  return b;
}

/**
 * Unit 1 answers a read 1.75 timeouts late, and the next read — same unit, function and length,
 * other registers — half a timeout after that request, as a busy device does. Before the line was
 * kept dirty after a timeout, the next request went out half a timeout after it (1.5 timeouts),
 * so the late frame came first and was taken as its answer: the voltage returned as the frequency.
 * Now the line must first be quiet for a whole timeout (until 2 timeouts, restarted by the late
 * frame). A quarter timeout from either edge leaves room for a loaded machine.
 */
async function lateAnswerThenNext(b: RtuBus, server: SimRtuServer, sim: SimSite, timeoutMs: number): Promise<void> {
  const voltage = expected(sim, 1, 'input', SDM630.at.phaseV[0], 2);
  const hz = expected(sim, 1, 'input', SDM630.at.hz, 2);
  expect(voltage).not.toEqual(hz);
  server.faults.script('meter', 1, [
    { kind: 'delay', ms: 1.75 * timeoutMs },
    { kind: 'delay', ms: timeoutMs / 2 },
  ]);
  expect((await failure(b.readInput(1, SDM630.at.phaseV[0], 2))).kind).toBe('timeout');
  expect(await b.readInput(1, SDM630.at.hz, 2)).toEqual(hz);
  expect(await b.readInput(1, SDM630.at.phaseV[0], 2)).toEqual(voltage);
}

describe.skipIf(!HAVE_SOCAT)('Modbus RTU bus on a serial line (socat pty pair)', () => {
  const sim = simSite();
  // a clock that stands still: the registers do not change between the wire and the check
  const clock = new ManualClock(T0);
  let line: PtyPair & { dir: string };
  let server: SimRtuServer;
  const traffic: { dir: 'in' | 'out'; at: number }[] = [];
  const buses: RtuBus[] = [];

  const bus = (opts: Partial<RtuBusOptions> = {}) => {
    const b = new RtuBus({
      name: `rtu:${line.b}`,
      link: () => new SerialLink({ device: line.b, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 }),
      timeoutMs: 300,
      interFrameDelayMs: 4,
      ...opts,
    });
    buses.push(b);
    return b;
  };

  beforeAll(async () => {
    line = await ptyPair();
    server = await startSimRtuServer(sim, clock, {
      path: line.a,
      host: 'meter',
      onLine: (dir, _b, at) => traffic.push({ dir, at }),
    });
  });
  afterEach(async () => {
    server.faults.clear();
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });
  afterAll(async () => {
    await server?.close();
    await line?.close();
  });

  it('reads input registers of the SDM630 and holding registers of a SunSpec meter on one line', async () => {
    const b = bus();
    expect(await b.readInput(1, SDM630.at.totalW, 2)).toEqual(expected(sim, 1, 'input', SDM630.at.totalW, 2));
    expect(await b.readInput(1, 0, 80)).toEqual(expected(sim, 1, 'input', 0, 80));
    expect(await b.readHolding(1, SDM630.serial.start, 2)).toEqual(expected(sim, 1, 'holding', SDM630.serial.start, 2));
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
    expect(await b.readHolding(2, 40000, 125)).toEqual(expected(sim, 2, 'holding', 40000, 125));
  });

  it('puts one request on the line at a time: the next waits while a unit is silent', async () => {
    const b = bus({ timeoutMs: 1200 });
    server.faults.set('meter', 1, { kind: 'silent' });
    const before = { u1: server.faults.requests('meter', 1), u2: server.faults.requests('meter', 2) };
    const first = failure(b.readInput(1, 0, 2));
    const second = b.readHolding(2, 40000, 2);
    await waitFor('the silent unit got its request', () => server.faults.requests('meter', 1) > before.u1);
    // unit 1 has 1.2 s to answer; until then nothing else may go on the line
    expect(server.faults.requests('meter', 2)).toBe(before.u2);
    expect((await first).kind).toBe('timeout');
    expect(await second).toEqual(SUNS);
    expect(server.faults.requests('meter', 2)).toBe(before.u2 + 1);
  });

  it('keeps the line silent for the inter-frame delay between an answer and the next request', async () => {
    const b = bus({ interFrameDelayMs: 40 });
    traffic.length = 0;
    for (let i = 0; i < 5; i++) await b.readHolding(2, 40000, 2);
    const gaps: number[] = [];
    for (let i = 1; i < traffic.length; i++) {
      if (traffic[i]!.dir === 'in' && traffic[i - 1]!.dir === 'out') gaps.push(traffic[i]!.at - traffic[i - 1]!.at);
    }
    expect(gaps).toHaveLength(4);
    // a lower bound only: a slow machine makes gaps longer, never shorter
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(39);
  });

  it('garbage, a bad CRC and a cut-off frame are crc errors, and the next read is clean', async () => {
    const b = bus();
    for (const kind of ['garbage', 'bad-crc', 'truncated'] as const) {
      server.faults.set('meter', 1, { kind }, 1);
      const e = await failure(b.readInput(1, SDM630.at.hz, 2));
      expect(e.kind, kind).toBe('crc');
      expect(await b.readInput(1, SDM630.at.hz, 2)).toEqual(expected(sim, 1, 'input', SDM630.at.hz, 2));
    }
  });

  it('a well-framed answer with fewer registers than asked is a protocol error', async () => {
    const b = bus();
    server.faults.set('meter', 2, { kind: 'short-count' }, 1);
    const e = await failure(b.readHolding(2, 40000, 4));
    expect(e.kind).toBe('protocol');
    expect(e.message).toMatch(/asked unit 2 for 4 registers at 40000, the answer holds 6 bytes/);
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
  });

  it('noise in front of an answer, or on an idle line, does not spoil the next answer', async () => {
    const b = bus();
    server.faults.set('meter', 1, { kind: 'noisy' }, 1);
    expect(await b.readInput(1, SDM630.at.importKWh, 4)).toEqual(expected(sim, 1, 'input', SDM630.at.importKWh, 4));
    server.writeRaw(Buffer.from([0x01, 0x04, 0xff, 0x00, 0x13, 0x37, 0x02]));
    expect(await b.readInput(1, SDM630.at.importKWh, 4)).toEqual(expected(sim, 1, 'input', SDM630.at.importKWh, 4));
  });

  it('exception answers carry their code; an absent unit is a timeout', async () => {
    const b = bus();
    server.faults.set('meter', 1, { kind: 'exception', code: 4 }, 1);
    const e = await failure(b.readInput(1, 0, 2));
    expect(e).toMatchObject({ kind: 'exception', exceptionCode: 4 });
    expect(await failure(b.readHolding(2, 0, 2))).toMatchObject({ kind: 'exception', exceptionCode: 2 });
    expect(await failure(b.readHolding(9, 40000, 2))).toMatchObject({ kind: 'timeout' });
  });

  it('an answer arriving after its timeout is never taken for the next request of the same shape', async () => {
    await lateAnswerThenNext(bus({ timeoutMs: 800, backoff: { failuresBeforeBackoff: 10 } }), server, sim, 800);
  });

  it('a whole frame that does not fit the request is a protocol error, never data', async () => {
    const b = bus();
    const hz = expected(sim, 1, 'input', SDM630.at.hz, 2);
    // unit 1 stays silent; the test puts the frames on the line once it has the request
    server.faults.set('meter', 1, { kind: 'silent' }, 2);
    const withFrame = async (frame: Buffer) => {
      const asked = server.faults.requests('meter', 1);
      const read = failure(b.readInput(1, SDM630.at.hz, 2));
      await waitFor('unit 1 has the request', () => server.faults.requests('meter', 1) > asked);
      server.writeRaw(frame);
      return read;
    };
    // from the asked unit, the right length, but holding registers: at once
    expect(await withFrame(answerFrame(1, 0x03, hz))).toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('the answer is function 3'),
    });
    // another unit's answer: never this one's, named when the asked unit's answer does not come
    expect(await withFrame(answerFrame(7, 0x04, hz))).toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('a frame from unit 7 (function 4)'),
    });
    expect(await b.readInput(1, SDM630.at.hz, 2)).toEqual(hz);
  });

  it('a silent unit backs off and costs the other unit on the line little', async () => {
    let now = 0;
    // 300 ms: at 100 a loaded machine (load 10 on 2 cores) sometimes timed out unit 2's answer too
    const b = bus({ timeoutMs: 300, backoff: { failuresBeforeBackoff: 2, minBackoffMs: 2000, now: () => now } });
    server.faults.set('meter', 1, { kind: 'silent' });
    const sent1 = server.faults.requests('meter', 1);
    const sent2 = server.faults.requests('meter', 2);
    let answered = 0;
    let skipped = 0;
    for (let round = 0; round < 10; round++, now += 1000) {
      const e = await failure(b.readInput(1, 0, 2));
      if (e.skipped) skipped++;
      await b.readHolding(2, 40000, 2);
      answered++;
    }
    // on the wire at t = 0, 1 s (2 timeouts: back off 2 s), 3 s (back off 4 s), 7 s (back off 8 s)
    expect(server.faults.requests('meter', 1) - sent1).toBe(4);
    expect(skipped).toBe(6);
    expect(answered).toBe(10);
    expect(server.faults.requests('meter', 2) - sent2).toBe(10);
    expect(b.sent).toBe(14);
  });

  it('a line that disappears fails with connection errors and is reopened when it is back', async () => {
    const dir = line.dir;
    const b = bus({ reconnect: { minBackoffMs: 20, maxBackoffMs: 100 } });
    expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
    await server.close();
    await line.close();
    const e = await failure(b.readHolding(2, 40000, 2));
    expect(e.kind).toBe('connection');
    line = await ptyPair(dir);
    server = await startSimRtuServer(sim, clock, {
      path: line.a,
      host: 'meter',
      onLine: (d, _b, at) => traffic.push({ dir: d, at }),
    });
    expect(await waitFor('the bus reads again', () => b.readHolding(2, 40000, 2).catch(() => undefined))).toEqual(SUNS);
  });
});

describe.skipIf(!HAVE_SOCAT)('Modbus RTU over TCP (a transparent serial server)', () => {
  /** a simulator behind a socat serial server, and a connected bus to it */
  async function overTcp(
    timeoutMs: number,
    run: (b: RtuBus, server: SimRtuServer, sim: SimSite) => Promise<void>,
  ): Promise<void> {
    const sim = simSite();
    const ser = await serialServer();
    const server = await startSimRtuServer(sim, new ManualClock(T0), { path: ser.serial, host: 'meter' });
    const b = new RtuBus({
      name: `rtu-over-tcp://127.0.0.1:${ser.port}`,
      link: () => new SocketLink('127.0.0.1', ser.port),
      timeoutMs,
      interFrameDelayMs: 1.75,
      reconnect: { minBackoffMs: 20 },
      backoff: { failuresBeforeBackoff: 10 },
    });
    try {
      const total = await waitFor('connected', () => b.readInput(1, SDM630.at.totalW, 2).catch(() => undefined));
      expect(total).toEqual(expected(sim, 1, 'input', SDM630.at.totalW, 2));
      await run(b, server, sim);
    } finally {
      await b.close();
      await server.close();
      await ser.close();
    }
  }

  it('reads two units through the socket and recovers from a bad CRC', async () => {
    await overTcp(500, async (b, server) => {
      expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
      server.faults.set('meter', 2, { kind: 'bad-crc' }, 1);
      expect((await failure(b.readHolding(2, 40000, 2))).kind).toBe('crc');
      expect(await b.readHolding(2, 40000, 2)).toEqual(SUNS);
    });
  });

  it('an answer arriving after its timeout is never taken for the next request of the same shape', async () => {
    // over socat and TCP a loaded machine delays the late frame more than on a pty: a wider quarter
    await overTcp(1600, (b, server, sim) => lateAnswerThenNext(b, server, sim, 1600));
  });
});

describe.skipIf(!HAVE_SOCAT)("the simulator's RTU server at line speed (bench/scale.ts)", () => {
  it('answers no sooner than the request and the answer take at the baud rate, with the right registers', async () => {
    const sim = simSite();
    const clock = new ManualClock(T0);
    const line = await ptyPair();
    const traffic: { dir: 'in' | 'out'; bytes: number; at: number }[] = [];
    const server = await startSimRtuServer(sim, clock, {
      path: line.a,
      host: 'meter',
      baudRate: 2400,
      lineSpeed: true,
      onLine: (dir, b, at) => traffic.push({ dir, bytes: b.length, at }),
    });
    const b = new RtuBus({
      name: 'rtu:line-speed',
      link: () => new SerialLink({ device: line.b, baudRate: 2400, parity: 'none', dataBits: 8, stopBits: 1 }),
      timeoutMs: 5000,
      interFrameDelayMs: 15,
    });
    try {
      // 8 bytes of request, 5 + 250 of answer: 263 characters of 10 bits at 2400 baud, 1.1 s (a pty takes microseconds)
      expect(await b.readHolding(2, 40000, 125)).toEqual(expected(sim, 2, 'holding', 40000, 125));
      const firstIn = traffic.find((t) => t.dir === 'in')!;
      const out = traffic.filter((t) => t.dir === 'out');
      expect(out).toHaveLength(1);
      expect(out[0]!.bytes).toBe(255);
      // a lower bound only: a slow machine answers later, never sooner
      expect(out[0]!.at - firstIn.at).toBeGreaterThanOrEqual(wireTimeMs(8 + 255, 2400) - 1);
    } finally {
      await b.close();
      await server.close();
      await line.close();
    }
  });
});
