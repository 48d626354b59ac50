/**
 * The limits loop under random timing (docs/design.md "How fault-prone code is tested"). The loop
 * broke three times on a loaded box, each time in a way nobody had named: a step between a poll's
 * meter and inverter readings, a first look that timed out, and a meter read a moment after the
 * inverters while their output stepped. So it gets a seeded random schedule, not one more replay.
 *
 * The real feature, sources, controller and event bus on a manual clock; the plant is two 5 kW
 * inverters whose output follows a limit `lag` after it was written (the simulator's LaggedLimit, a
 * step as SunSpec 704 devices do once their ramp is over), a house and the grid meter between them.
 * Each poll reads the meter and the inverters at random moments within `skew` of the tick and in
 * any order, stamped with the tick as the poller does; writes reach the device after a random delay.
 * The faults: the house steps, clouds change what each array can give, quiet spells.
 *
 * Invariants, once a step has had time to settle (three polls, the skew, the write and the lag):
 * the export is at most the limit + 1 % of the rating, and the inverters are not held below what
 * the limit allows (their share of house + limit, less 2 % of the rating). A failure prints SEED=…
 */
import { describe, it } from 'vitest';
import type { ActivePowerLimit } from '../../src/core/active-power-limit.js';
import { ManualClock } from '../../src/core/clock.js';
import { streamIds } from '../../src/core/streams.js';
import { MARGIN_FRACTION } from '../../src/limits/controller.js';
import { FAST_POLL_MS, SILENT_MS } from '../../src/limits/feature.js';
import { LaggedLimit } from '../../src/sim/power-limit.js';
import { type FaultRun, type FaultStep, runFaults } from '../support/faults-run.js';
import { faultSeeds, type Prng } from '../support/faults-seed.js';
import { T0, twoInverters } from './two-inverters.js';

const SEEDS = faultSeeds(12);
const STEPS = Number(process.env.FAULT_STEPS ?? 25);
const IDS = ['inv', 'inv2'] as const;
const RATED = 5000;
const TOTAL = RATED * IDS.length;
const TICK = 10;
/** after the window settled, this long is watched */
const WATCH_MS = 3000;
const WRITE_MS = 400;
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('the limits loop under random read timing, write delays and house and cloud steps', () => {
  for (const seed of SEEDS)
    it(`seed ${seed}: ${STEPS} steps`, async () => {
      const run = await loopFaults(seed);
      console.log(`limits loop SEED=${seed}: ${run.checks} checks passed`);
    });
});

async function loopFaults(seed: number): Promise<FaultRun> {
  const h = await harness();
  try {
    return await runFaults('limits loop', seed, STEPS, h);
  } finally {
    await h.stop();
  }
}

async function harness() {
  // what a run is made of is drawn from the run's PRNG at its first step
  let world: World | undefined;
  return {
    next(rng: Prng, run: FaultRun): FaultStep {
      if (!world) return { name: 'start', run: async () => void (world = await start(rng, run)) };
      const w = world;
      const fault = rng.pick([
        ['house', 3],
        ['cloud', 2],
        ['quiet', 1],
        ['silent', 2],
      ] as const);
      if (fault === 'house') {
        const houseW = rng.int(100, 7000);
        return { name: `house ${houseW} W`, run: () => w.settle(() => void (w.houseW = houseW)) };
      }
      if (fault === 'cloud') {
        const avail = IDS.map(() => rng.int(0, RATED));
        return { name: `arrays give ${avail.join('/')} W`, run: () => w.settle(() => void (w.availW = avail)) };
      }
      if (fault === 'silent') {
        // an inverter stops answering (a dongle's Wi-Fi, a TCP link down); the house steps meanwhile,
        // and a cloud may cross its array: its output moves where no reading shows it
        const i = rng.int(0, IDS.length - 1);
        const houseW = rng.int(100, 7000);
        const cloudW = rng.next() < 0.5 ? rng.int(0, RATED) : undefined;
        return {
          name: `${IDS[i]} silent, house ${houseW} W${cloudW === undefined ? '' : `, its array ${cloudW} W`}`,
          run: async () => {
            await w.settle(() => {
              w.silent = i;
              w.houseW = houseW;
            }, SILENT_MS);
            if (cloudW !== undefined) {
              const avail = [...w.availW];
              avail[i] = cloudW;
              await w.settle(() => void (w.availW = avail));
            }
            // it answers again: taken back into the loop once two polls have it (feature.ts)
            w.silent = -1;
            await w.settle(() => undefined, FAST_POLL_MS, false);
          },
        };
      }
      return { name: 'quiet', run: () => w.settle(() => undefined) };
    },
    async check(): Promise<number> {
      return world ? world.check() : 0;
    },
    async stop() {
      await world?.stop();
    },
  };
}

type World = Awaited<ReturnType<typeof start>>;

async function start(rng: Prng, run: FaultRun) {
  const exportW = rng.pick([
    [0, 3],
    [300, 1],
    [2000, 1],
  ] as const);
  const lagMs = rng.int(100, 2000);
  // within 0.6 s, with the writes within 0.4 s of each other, a step of one inverter falls between
  // the readings of one poll at most: beyond that, two inverters' steps can each catch one of two
  // polls in a row, and two polls mid-step agree (docs/limits.md says what the loop does then)
  const skewMs = rng.int(0, 600);
  run.done.push(`exportW ${exportW}, lag ${lagMs} ms, reads within ${skewMs} ms`);
  const clock = new ManualClock(T0);
  const lags = IDS.map(() => new LaggedLimit(lagMs, T0));
  const world = {
    houseW: 500,
    /** the inverter that does not answer (reads, writes), -1: none */
    silent: -1,
    availW: IDS.map(() => RATED * 0.9),
    samples: [] as { overW: number; outputW: number; wantW: number }[],
    out: (i: number) => Math.min(world.availW[i]!, lags[i]!.at(clock.now()) ?? Number.POSITIVE_INFINITY),
    gridW: () => world.houseW - IDS.reduce((a, _, i) => a + world.out(i), 0),
    async advance(ms: number, sample: boolean) {
      for (let t = 0; t < ms; t += TICK) {
        clock.advance(TICK);
        await flush();
        if (!sample) continue;
        // what the limit leaves the inverters that answer: house + limit, less what a silent one
        // (which keeps its last command) delivers. Each takes its share of it, or all its array has
        const answering = IDS.map((_, i) => i).filter((i) => i !== world.silent);
        const silentW = world.silent < 0 ? 0 : world.out(world.silent);
        const leftW = world.houseW + exportW - silentW;
        const share = Math.max(0, leftW - MARGIN_FRACTION * TOTAL) / answering.length;
        const answeringW = answering.reduce((a, i) => a + world.out(i), 0);
        world.samples.push({
          // what the export can be held to: the limit, or what a silent inverter exports alone
          overW: -world.gridW() - Math.max(exportW, silentW - world.houseW),
          outputW: answeringW,
          wantW: answering.reduce((a, i) => a + Math.max(0, Math.min(world.availW[i]!, share)), 0),
        });
      }
    },
    /** a change, then the time it may take to be held (`more` on top), then WATCH_MS watched */
    async settle(change: () => void, more = 0, watch = true) {
      change();
      world.samples = [];
      await world.advance(more + 3 * FAST_POLL_MS + skewMs + WRITE_MS + lagMs + 200, false);
      if (watch) await world.advance(WATCH_MS, true);
    },
    check(): number {
      for (const s of world.samples) {
        if (s.overW > 0.01 * TOTAL)
          throw new Error(`exported ${Math.round(s.overW)} W more than the limit of ${exportW} W allows, once settled`);
        if (s.outputW < s.wantW - 0.02 * TOTAL)
          throw new Error(`held at ${Math.round(s.outputW)} W where the limit allows ${Math.round(s.wantW)} W`);
      }
      return world.samples.length;
    },
    stop: async (): Promise<void> => undefined,
  };
  const limitOf = (i: number): ActivePowerLimit => ({
    revert: { kind: 'revert-unlimited', seconds: 60 },
    ratedW: async () => RATED,
    apply: (_bus, command) =>
      new Promise((resolve, reject) => {
        if (world.silent === i) {
          clock.setTimeout(() => reject(new Error('timeout')), 1000);
          return;
        }
        clock.setTimeout(
          () => {
            lags[i]!.note(clock.now(), command.kind === 'limit' ? command.watts : null);
            resolve([]);
          },
          rng.int(0, WRITE_MS),
        );
      }),
  });
  const { f, bus } = twoInverters(
    [`  exportW: ${exportW}`],
    (id) => limitOf(IDS.indexOf(id as (typeof IDS)[number])),
    clock,
  );
  // the poller: every second each device is read at a moment of its own within the skew, stamped with the tick
  const poll = () => {
    const ts = clock.now();
    const reads: [number, () => void][] = [
      [
        rng.int(0, skewMs),
        () => bus.emit('reading', { streamId: streamIds.gridMeter('gm'), ts, values: { power_W: world.gridW() } }),
      ],
      ...IDS.map(
        (id, i) =>
          [
            rng.int(0, skewMs),
            () =>
              world.silent !== i &&
              bus.emit('reading', { streamId: streamIds.inverter(id), ts, values: { power_AC_W: -world.out(i) } }),
          ] as [number, () => void],
      ),
    ];
    for (const [at, read] of reads) clock.setTimeout(read, at);
    clock.setTimeout(poll, FAST_POLL_MS);
  };
  clock.setTimeout(poll, FAST_POLL_MS);
  await f.start();
  // a stop writes and waits for the devices, whose answers come on the manual clock
  world.stop = async () => {
    let stopped = false;
    const stop = f.stop().finally(() => void (stopped = true));
    for (let i = 0; i < 1000 && !stopped; i++) {
      clock.advance(TICK);
      await flush();
    }
    await stop;
  };
  await world.advance(FAST_POLL_MS, false);
  return world;
}
