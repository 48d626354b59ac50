/**
 * bench/scale.ts's RS-485 line: a socat pty pair with the simulator's RTU server on one end,
 * paced to the line speed (`lineSpeed`: a pty carries bytes at once), serving battery blocks at
 * units 2.. and a meter after them; the site.yaml entries of those devices for the gateway's end;
 * and the line's traffic, from which its busy share and its capacity follow.
 */
import { ScaledClock } from '../../src/core/clock.js';
import { interFrameDelayMs, wireTimeMs } from '../../src/modbus/rtu-timing.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimRtuServer, startSimRtuServer } from '../../src/sim/rtu-server.js';
import { SimSite } from '../../src/sim/site.js';
import { ptyPair } from '../../test/support/socat.js';

const BLOCKS = 16;

/** a tenth of the site, at least one battery block and one meter */
export const rtuCount = (devices: number): number => Math.max(2, Math.round(devices / 10));

export interface LineTraffic {
  bytes: number;
  /** answers seen: each answer and its request are two frames, each followed by 3.5 characters of silence */
  answers: number;
}

/** The time the traffic occupies the line at this baud rate (8N1), ms: characters plus inter-frame silences. */
export function lineBusyMs(t: LineTraffic, baudRate: number): number {
  return wireTimeMs(t.bytes, baudRate) + 2 * t.answers * interFrameDelayMs(baudRate);
}

export interface RtuLine {
  /** site.yaml device entries (flow style) */
  devices: string[];
  ids: string[];
  traffic: LineTraffic;
  close(): Promise<void>;
}

export async function startRtuLine(devices: number, baudRate: number, inverterId: string): Promise<RtuLine> {
  const batteries = rtuCount(devices) - 1;
  const meterUnit = batteries + 2;
  const clock = new ScaledClock(1);
  // the simulator holds 16 blocks behind one inverter: more on the line come from another site
  const sites = Array.from({ length: Math.ceil(batteries / BLOCKS) }, (_, i) => {
    const sim = defaultSimConfig();
    const blocks = Math.min(BLOCKS, batteries - i * BLOCKS);
    sim.battery.blocks = Array.from({ length: blocks }, () => ({ ...sim.battery.blocks[0]! }));
    return new SimSite(sim, clock.now());
  });
  // one line: battery units 2.., then the first site's meter at meterUnit
  const line = {
    unit: (_host: string, id: number) => {
      if (id === meterUnit) return sites[0]!.unit('meter', 1);
      const k = id - 2;
      return k >= 0 && k < batteries ? sites[Math.floor(k / BLOCKS)]!.unit('inverter', 2 + (k % BLOCKS)) : undefined;
    },
    update: (now: number) => {
      for (const site of sites) site.update(now);
    },
  } as unknown as SimSite;
  const pty = await ptyPair();
  const traffic: LineTraffic = { bytes: 0, answers: 0 };
  let server: SimRtuServer;
  try {
    server = await startSimRtuServer(line, clock, {
      path: pty.a,
      host: 'inverter',
      baudRate,
      lineSpeed: true,
      onLine: (dir, bytes) => {
        traffic.bytes += bytes.length;
        if (dir === 'out') traffic.answers++;
      },
    });
  } catch (err) {
    await pty.close();
    throw err;
  }
  const conn = (unitId: number) =>
    `connection: { type: rtu, device: ${JSON.stringify(pty.b)}, baudRate: ${baudRate}, parity: none, stopBits: 1, unitId: ${unitId} }`;
  const ids: string[] = [];
  const entries: string[] = [];
  for (let b = 0; b < batteries; b++) {
    ids.push(`rtu-bat-${b}`);
    entries.push(`{ id: rtu-bat-${b}, role: battery, profile: sunspec, inverter: ${inverterId}, ${conn(b + 2)} }`);
  }
  ids.push('rtu-meter');
  entries.push(`{ id: rtu-meter, role: consumption-meter, profile: sunspec, ${conn(meterUnit)} }`);
  return {
    devices: entries,
    ids,
    traffic,
    close: async () => {
      await server.close();
      await pty.close();
    },
  };
}
