/**
 * Settle time and overshoot of the site-limits loop after a step (docs/limits.md "How a limit is
 * held"): the daemon in process (real Modbus TCP, 1 s polls while a limit is in force) on the
 * simulator's SunSpec 704 hybrid inverter (its output follows a new limit 1 s late) at a clear June
 * noon with a smooth house. site.yaml holds exportW 3000; a schedule slot steps it to 0 W at a
 * whole second and back after 20 s.
 *
 * Baseline, in the same run: the inverter alone, the final limit written straight into its 704
 * registers at the step (what a loop that knew the answer at once would get): the plant's own lag.
 *
 * Settled: the export at the meter stays within 1 % of the inverters' rating of the new limit
 * from then on (the issue's bar: 5 s). Over the limit: the most the export went above the limit
 * in force after settling; under: the most it went below the limit less the margin (curtailment
 * beyond what the limit needs).
 *
 * With `huawei` or `sungrow` the gateway sees the inverter only through that vendor's limit map
 * (src/sim/huawei-sun2000.ts: 40125, an output limit; src/sim/sungrow-sh.ts: the feed-in
 * limitation 13074/13087, the device's own export limiter), and the baseline writes the same
 * registers.
 *
 *   node --import tsx bench/limits-step.ts [steps=3] [sunspec|huawei|sungrow]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScaledClock } from '../src/core/clock.js';
import { silentLogger } from '../src/core/log.js';
import { demoSiteConfig } from '../src/demo/default-site.js';
import { MARGIN_FRACTION } from '../src/limits/controller.js';
import { putLimitSchedule } from '../src/limits/schedule.js';
import { Daemon } from '../src/main.js';
import { M704 } from '../src/profiles/sunspec-limit.js';
import type { InverterDevice } from '../src/sim/device-images.js';
import { HUAWEI } from '../src/sim/huawei-sun2000.js';
import { defaultSimConfig } from '../src/sim/model.js';
import { startSimServers } from '../src/sim/servers.js';
import { SimSite } from '../src/sim/site.js';
import { SUNGROW } from '../src/sim/sungrow-sh.js';
import { openDatabase } from '../src/store/db.js';

const STEPS = Number(process.argv[2] ?? 3);
const VIA = (process.argv[3] ?? 'sunspec') as 'sunspec' | 'huawei' | 'sungrow';
if (!['sunspec', 'huawei', 'sungrow'].includes(VIA)) throw new Error(`via ${VIA}: sunspec, huawei or sungrow`);
const VENDOR_UNIT = { sunspec: 1, huawei: 9, sungrow: 10 }[VIA];
const RATED = 6000;
const BAND = 0.01 * RATED;
const HIGH = 3000;
const LOW = 0;
const HOLD_MS = 20_000;
const NOON = Date.parse('2026-06-21T10:30:00Z');

const cfg = defaultSimConfig();
cfg.weather.cloudiness = 0;
cfg.house.applianceRate = 0;
cfg.inverter.limitModels = VIA === 'sunspec' ? [704] : [];
if (VIA === 'huawei') cfg.huaweiUnitId = VENDOR_UNIT;
if (VIA === 'sungrow') cfg.sungrowUnitId = VENDOR_UNIT;
for (const b of cfg.battery.blocks) b.initialSocPct = b.socMaxPct;
const clock = new ScaledClock(1, NOON);
const sim = new SimSite(cfg, clock.now());
const servers = await startSimServers(sim, clock, { host: '127.0.0.1' });
const inverter = sim.devices[0] as InverterDevice;
const m704 = VIA === 'sunspec' ? inverter.image.model(704).address : 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exportNow = () => {
  sim.update(clock.now());
  return -sim.snapshot().gridW;
};

interface Step {
  settleMs: number;
  overW: number;
  underW: number;
}

/** samples the export every 50 ms for `ms` after a step at real time `at` to limit `to` */
async function watch(at: number, to: number, ms: number): Promise<Step> {
  const xs: { t: number; w: number }[] = [];
  while (Date.now() < at + ms) {
    if (Date.now() >= at) xs.push({ t: Date.now() - at, w: exportNow() });
    await sleep(50);
  }
  let settled = xs.length;
  while (settled > 0 && Math.abs(xs[settled - 1]!.w - to) <= BAND) settled--;
  const after = xs.slice(settled);
  return {
    settleMs: settled < xs.length ? xs[settled]!.t : Number.NaN,
    overW: Math.max(0, ...after.map((x) => x.w - to)),
    underW: Math.max(0, ...after.map((x) => to - MARGIN_FRACTION * RATED - x.w)),
  };
}

/** the plant alone: the final limit (house + export) written into its 704 registers at the step */
async function baseline(to: number): Promise<Step> {
  sim.update(clock.now());
  const s = sim.snapshot();
  const house = s.gridW + s.inverter.acW;
  const share = Math.min(RATED, house + to - MARGIN_FRACTION * RATED) / RATED;
  const at = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  await sleep(at - Date.now());
  // the write is dated at the model's time: brought to now first, as the Modbus server does
  sim.update(clock.now());
  if (VIA === 'sunspec') {
    sim.write('inverter', 1, m704 + M704.WMaxLimPct, [Math.floor((100 * share) / 0.01)]);
    sim.write('inverter', 1, m704 + M704.WMaxLimPctEna, [1]);
  } else if (VIA === 'huawei') sim.write('inverter', VENDOR_UNIT, HUAWEI.derating, [Math.floor(1000 * share)]);
  else {
    // the device's own limiter takes the export limit itself
    sim.write('inverter', VENDOR_UNIT, SUNGROW.feedIn.limitW, [to]);
    sim.write('inverter', VENDOR_UNIT, SUNGROW.feedIn.switch, [SUNGROW.feedIn.ON]);
  }
  return watch(at, to, 8000);
}

/** the inverter unlimited again, before the gateway takes over */
function unlimited(): void {
  if (VIA === 'sunspec') sim.write('inverter', 1, m704 + M704.WMaxLimPctEna, [0]);
  else if (VIA === 'huawei') sim.write('inverter', VENDOR_UNIT, HUAWEI.derating, [HUAWEI.full]);
  else sim.write('inverter', VENDOR_UNIT, SUNGROW.feedIn.switch, [SUNGROW.feedIn.OFF]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Record<string, Step[]> = { 'baseline down': [], 'baseline up': [], 'gateway down': [], 'gateway up': [] };

for (let i = 0; i < STEPS; i++) {
  rows['baseline down']!.push(await baseline(LOW));
  rows['baseline up']!.push(await baseline(HIGH));
}
unlimited();

const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-bench-limits-'));
const config = demoSiteConfig(servers, {
  httpHost: '127.0.0.1',
  httpPort: 0,
  dataDir,
  pollSeconds: 5,
  batteryBlocks: 2,
});
config.limits.exportW = HIGH;
if (VIA !== 'sunspec') {
  // the inverter seen only through the vendor's profile, without the SunSpec battery units
  const inv = config.devices.find((d) => d.id === 'inverter')!;
  inv.profile = VIA === 'huawei' ? 'huawei-sun2000' : 'sungrow-sh-rt';
  inv.connection.unitId = VENDOR_UNIT;
  config.devices = config.devices.filter((d) => d.role !== 'battery');
}
const daemon = await Daemon.start({ config, log: silentLogger(), listen: false });
const db = openDatabase(join(dataDir, 'sitegw.db'));
try {
  // held at HIGH first
  const until = Date.now() + 60_000;
  while (Math.abs(exportNow() - HIGH) > BAND && Date.now() < until) await sleep(200);
  await sleep(3000);
  for (let i = 0; i < STEPS; i++) {
    const at = Math.ceil(Date.now() / 1000) * 1000 + 3000;
    putLimitSchedule(
      db,
      [{ interval: `${new Date(at).toISOString()}/${new Date(at + HOLD_MS).toISOString()}`, exportW: LOW }],
      'bench',
      Date.now(),
    );
    rows['gateway down']!.push(await watch(at, LOW, HOLD_MS - 500));
    rows['gateway up']!.push(await watch(at + HOLD_MS, HIGH, HOLD_MS - 500));
  }
} finally {
  db.close();
  await daemon.stop();
  await servers.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const base = {
  down: median(rows['baseline down']!.map((s) => s.settleMs)),
  up: median(rows['baseline up']!.map((s) => s.settleMs)),
};
console.log(
  `\nsite-limits loop, export step ${HIGH} → ${LOW} W and back, ${RATED} W inverter (${{ sunspec: 'SunSpec 704', huawei: 'Huawei 40125', sungrow: 'Sungrow feed-in limitation' }[VIA]}, 1 s lag), median of ${STEPS}\n`,
);
console.log(
  '| step | settled within 1 % of the rating, s | ratio to the inverter alone | most over the limit after settling, W | most under the limit less the margin, W |',
);
console.log('|---|---:|---:|---:|---:|');
for (const [name, xs] of Object.entries(rows)) {
  const settle = median(xs.map((s) => s.settleMs));
  const b = name.endsWith('down') ? base.down : base.up;
  console.log(
    `| ${name} | ${(settle / 1000).toFixed(2)} | ${(settle / b).toFixed(2)}× | ${Math.max(...xs.map((s) => s.overW)).toFixed(0)} | ${Math.max(...xs.map((s) => s.underW)).toFixed(0)} |`,
  );
}
process.exit(0);
