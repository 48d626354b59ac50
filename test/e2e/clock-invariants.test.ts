/**
 * The time half of the fault-invariant harness (docs/design.md "How fault-prone code is tested"):
 * the real daemon under libfaketime, a real mosquitto, and a seeded random sequence of clock
 * faults and SIGKILLs. The true time is the test's real clock; the daemon's wall clock is the
 * true time plus an error the faults move:
 *   - glitch: a step forward (an hour, a day, a month: to just before one of that time's quarter
 *     hours) undone seconds later, sometimes with a SIGKILL and restart inside it;
 *   - back then NTP: a step back, then NTP sets it (timesyncd's flag: its first synchronisation);
 *   - stale boot: SIGKILL, a start with a clock hours or days behind, then NTP sets it;
 *   - a correction without NTP: behind, then a step to the true time that waits to be confirmed;
 *   - a SIGKILL at a random moment, and plain waits.
 * After every fault: no bucket labelled after the true time was sent (every uplink telemetry
 * message, at its arrival) or is served (the API, as a partner); once the clock is true again,
 * recording goes on within a poll (/healthz never says readings are not recorded); no lifetime
 * energy /metrics published goes lower. A failure prints SEED=…, which replays it.
 * The short run here: FAULT_SEEDS (default 1) × FAULT_STEPS (default 4); the long one: bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { TOKEN_PATH } from '../../src/api/http/oauth.js';
import { addClient } from '../../src/auth/clients.js';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { openDatabase } from '../../src/store/db.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { basic, get, postForm } from '../support/auth.js';
import { getJson, waitFor } from '../support/demo.js';
import { type FakeClockRun, LIBFAKETIME, runUnderFakeClock, setFakeClock, timesyncFlag } from '../support/faketime.js';
import { type FaultRun, type FaultStep, runFaults } from '../support/faults-run.js';
import { faultSeeds, type Prng } from '../support/faults-seed.js';
import { aedesBroker, MOSQUITTO, mosquittoBroker, type TestBroker } from '../support/mqtt-brokers.js';
import { parsePromText } from '../support/prom-text.js';

const SEEDS = faultSeeds(1);
const STEPS = Number(process.env.FAULT_STEPS ?? 4);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** a forward step waits this long (real ms) to be confirmed without NTP (SITEGW_CLOCK_CONFIRM_MS) */
const CONFIRM_MS = 8_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextBoundary = (t: number) => Math.floor(t / BUCKET_MS) * BUCKET_MS + BUCKET_MS;
const iso = (t: number) => new Date(t).toISOString();

describe.skipIf(!LIBFAKETIME)('clock faults: invariants under random steps and SIGKILLs', () => {
  let servers: SimServers;
  let broker: TestBroker;

  beforeAll(async () => {
    const clock = new ScaledClock(1);
    servers = await startSimServers(new SimSite(undefined, clock.now()), clock, { host: '127.0.0.1' });
    broker = MOSQUITTO ? await mosquittoBroker() : await aedesBroker();
  }, 60_000);

  afterAll(async () => {
    await broker?.close();
    await servers?.close();
  });

  for (const seed of SEEDS) {
    it(
      `seed ${seed}: ${STEPS} faults`,
      async () => {
        const run = await clockFaults(seed);
        console.log(`clock faults SEED=${seed}: ${run.done.join(' → ')}; ${run.checks} checks passed`);
      },
      60_000 + STEPS * 45_000,
    );
  }

  async function clockFaults(seed: number): Promise<FaultRun> {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-clockfaults-'));
    const offsetFile = join(dir, 'faketime');
    const dataDir = join(dir, 'data');
    const ntp = timesyncFlag(dir);
    ntp.sync();
    const config = join(dir, 'site.yaml');
    writeFileSync(
      config,
      demoSiteYaml(servers, {
        httpHost: '127.0.0.1',
        httpPort: 0,
        dataDir,
        pollSeconds: 1,
        batteryBlocks: 1,
        uplinkUrl: broker.url,
        siteId: `faults-${seed}`,
      }).replace(/^uplink:\n/m, 'uplink:\n  publishJitterSeconds: 0\n  protocolVersion: 4\n'),
    );
    mkdirSync(dataDir, { recursive: true });
    const db = openDatabase(join(dataDir, 'sitegw.db'));
    const { secret } = await addClient(db, { id: 'faults', devices: ['inverter'] }, Date.now());
    db.close();

    // the daemon's wall clock = the true (real) time + error
    const setError = (e: number) => {
      setFakeClock(offsetFile, Date.now() + e);
    };
    setError(0);
    /** telemetry at its arrival: bucket start, and the true time it arrived */
    const sent: { start: number; at: number; topic: string }[] = [];
    const sub = await mqtt.connectAsync(broker.url, { clean: true });
    await sub.subscribeAsync(`sitegw/faults-${seed}/#`, { qos: 1 });
    sub.on('message', (topic, payload) => {
      if (!topic.endsWith('/telemetry')) return;
      const m = JSON.parse(payload.toString()) as { time: string };
      sent.push({ start: Date.parse(m.time), at: Date.now(), topic });
    });
    const env = { ...ntp.env, SITEGW_CLOCK_CONFIRM_MS: String(CONFIRM_MS) };
    let d: FakeClockRun = await runUnderFakeClock(config, offsetFile, env);
    const lifetimes = new Map<string, number>();
    const glitchTargets: number[] = [];
    const kill = async () => {
      d.child.kill('SIGKILL');
      await d.exit;
    };
    const restart = async () => {
      d = await runUnderFakeClock(config, offsetFile, env);
    };
    const requests = () => [1, 2].reduce((n, u) => n + servers.faults.requests('inverter', u), 0);
    /** a poll after the clock change has been seen (libfaketime re-reads its file each second) */
    const aPoll = async () => {
      await sleep(1_200);
      const before = requests();
      await waitFor('a poll', () => requests() > before, 15_000);
    };

    const steps = (rng: Prng): FaultStep => {
      const kind = rng.pick([
        ['glitch', 4],
        ['glitch+kill', 2],
        ['back then NTP', 2],
        ['stale boot then NTP', 2],
        ['correction without NTP', 1],
        ['sigkill', 2],
        ['wait', 1],
      ] as const);
      switch (kind) {
        case 'glitch':
        case 'glitch+kill': {
          const by = rng.pick([
            [HOUR, 1],
            [DAY, 2],
            [30 * DAY, 1],
          ] as const);
          const lead = rng.int(0, 4_000);
          const holdMs = rng.int(2_000, 6_000);
          const killAt = kind === 'glitch+kill' ? rng.int(500, holdMs) : -1;
          return {
            name: `${kind} +${by / HOUR} h for ${holdMs} ms${killAt >= 0 ? ` (SIGKILL at ${killAt} ms)` : ''}`,
            run: async () => {
              const target = nextBoundary(Date.now() + by) - lead;
              glitchTargets.push(target);
              setError(target - Date.now());
              if (killAt >= 0) {
                await sleep(killAt);
                await kill();
                await restart();
                await sleep(Math.max(0, holdMs - killAt));
              } else await sleep(holdMs);
              setError(0);
              await aPoll();
            },
          };
        }
        case 'back then NTP': {
          const back = rng.int(30, 600) * 1000;
          return {
            name: `back ${back / 1000} s, then NTP`,
            run: async () => {
              ntp.unsync();
              await aPoll();
              setError(-back);
              await aPoll();
              setError(0);
              await sleep(1_200);
              ntp.sync();
              await aPoll();
            },
          };
        }
        case 'stale boot then NTP': {
          const behind = rng.int(1, 72) * HOUR;
          return {
            name: `SIGKILL, boot ${behind / HOUR} h behind, then NTP`,
            run: async () => {
              await kill();
              ntp.unsync();
              setError(-behind);
              await restart();
              await aPoll();
              setError(0);
              await sleep(1_200);
              ntp.sync();
              await aPoll();
            },
          };
        }
        case 'correction without NTP': {
          const behind = rng.int(1, 10) * 60_000;
          return {
            name: `${behind / 1000} s behind, then set without NTP (confirmed after ${CONFIRM_MS} ms)`,
            run: async () => {
              ntp.unsync();
              setError(-behind);
              await aPoll();
              setError(0);
              await aPoll();
              await sleep(CONFIRM_MS);
              await aPoll();
              ntp.sync();
            },
          };
        }
        case 'sigkill': {
          const after = rng.int(0, 3_000);
          return {
            name: `SIGKILL after ${after} ms`,
            run: async () => {
              await sleep(after);
              await kill();
              await restart();
              await aPoll();
            },
          };
        }
        default: {
          const ms = rng.int(1_000, 4_000);
          return { name: `wait ${ms} ms`, run: async () => void (await sleep(ms)) };
        }
      }
    };

    const check = async (): Promise<number> => {
      let n = 0;
      // never sent: each bucket had ended, in true time, when it arrived (2 s for the broker's hop)
      for (const m of sent) {
        if (m.start + BUCKET_MS > m.at + 2_000)
          throw new Error(`sent a bucket labelled ${iso(m.start)} at ${iso(m.at)} (true time)`);
        n++;
      }
      // never served: no entry after the true time, around now and around every glitch's target
      const token = (
        await postForm(
          `${d.url}${TOKEN_PATH}`,
          { grant_type: 'client_credentials' },
          { authorization: basic('faults', secret!) },
        )
      ).body.access_token as string;
      const now = Date.now();
      for (const around of [now, ...glitchTargets]) {
        const r = await get(
          `${d.url}/api/v1/devices/inverter/telemetry?interval=${iso(Math.min(around, now) - HOUR)}/${iso(around + HOUR)}`,
          { authorization: `Bearer ${token}` },
        );
        if (r.status !== 200) throw new Error(`telemetry: ${r.status} ${r.text}`);
        for (const e of r.body.entries as { interval: string }[]) {
          const start = Date.parse(e.interval.split('/')[0]!);
          if (start > Date.now())
            throw new Error(`the API serves a bucket labelled ${iso(start)} (true time ${iso(now)})`);
          n++;
        }
      }
      // recording goes on: the clock is true again and a poll went by
      const h = await getJson(`${d.url}/healthz`);
      const said = (h.body.problems as string[]).join('\n');
      if (/not recorded/.test(said)) throw new Error(`a true clock, and /healthz says: ${said}`);
      n++;
      // no lifetime published lower
      const res = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`/metrics: ${res.status}`);
      const fam = parsePromText(await res.text()).get('sitegw_energy_joules_total');
      for (const s of fam?.samples ?? []) {
        const key = JSON.stringify(s.labels);
        const before = lifetimes.get(key) ?? 0;
        if (s.value < before) throw new Error(`lifetime ${key} went from ${before} to ${s.value}`);
        lifetimes.set(key, s.value);
        n++;
      }
      return n;
    };

    try {
      await aPoll();
      return await runFaults('clock faults', seed, STEPS, { next: (rng) => steps(rng), check });
    } finally {
      if (d.child.exitCode === null) d.child.kill('SIGKILL');
      await sub.endAsync();
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
