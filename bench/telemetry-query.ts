/**
 * One year of one battery stream (35,040 buckets) through queryTelemetry at PT15M, PT1H and P1D,
 * against a bare SELECT of the same rows + JSON.stringify measured in the same run.
 * Both sides include serialisation, since that is what an HTTP response costs.
 *
 *   node --expose-gc --import tsx bench/telemetry-query.ts [runs]
 *
 * With --expose-gc every sample starts from a collected heap, so one case's garbage is not
 * billed to the next (the 8 MB responses make that debt large).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/api/http/app.js';
import { addClient } from '../src/auth/clients.js';
import { AuthService } from '../src/auth/service.js';
import { silentLogger } from '../src/core/log.js';
import type { StreamDef } from '../src/core/streams.js';
import { demoSiteConfig } from '../src/demo/default-site.js';
import { Site } from '../src/site/site.js';
import { openDatabase } from '../src/store/db.js';
import { findStreamKey } from '../src/store/streams.js';
import { Bucketer } from '../src/telemetry/bucketer.js';
import { queryTelemetry, type TelemetryResolution } from '../src/telemetry/query.js';
import { median } from './lib/stats.js';

const RUNS = Number(process.argv[2] ?? 15);
const YEAR_START = Date.parse('2026-01-01T00:00:00Z');
const YEAR_END = Date.parse('2027-01-01T00:00:00Z');
const POLL_MS = 60_000;
const BUCKET_MS = 900_000;

// the demo site's aggregated battery, so the HTTP case can serve it through the real app
const stream: StreamDef = {
  id: 'inverter__bb_agg',
  deviceId: 'inverter',
  deviceKind: 'battery_pack',
  channels: ['power_W', 'soc', 'soh', 'energy_Wh_increment', 'energy_Wh_decrement'],
  energyFrom: 'power_W',
};

const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-'));
try {
  const db = openDatabase(join(dir, 'bench.db'));

  const fillStart = performance.now();
  const bucketer = new Bucketer({ db, streams: [stream], pollPeriodMs: POLL_MS });
  bucketer.start();
  let soc = 50;
  for (let t = YEAR_START; t < YEAR_END; t += POLL_MS) {
    const hour = ((t / 3_600_000) % 24) + 0.3 * Math.sin(t / 7e6);
    const power = Math.round(3000 * Math.sin(((hour - 6) / 24) * 2 * Math.PI) + 200 * Math.sin(t / 1.3e6));
    soc = Math.min(100, Math.max(0, soc + power / 60 / 100));
    bucketer.ingest({ streamId: stream.id, ts: t, values: { power_W: power, soc, soh: 97.5 } });
    if ((t + POLL_MS) % BUCKET_MS === 0) bucketer.closeUntil(t + POLL_MS);
  }
  bucketer.closeUntil(YEAR_END);
  const fillMs = performance.now() - fillStart;

  const key = findStreamKey(db, stream.id)!;
  const bare = db.prepare('SELECT * FROM buckets WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s');
  const baseline = () => JSON.stringify(bare.all(key, YEAR_START / 1000, YEAR_END / 1000));
  const viaQuery = (resolution: TelemetryResolution) => () =>
    JSON.stringify({
      entries: queryTelemetry(db, {
        streamId: stream.id,
        deviceId: stream.id,
        deviceKind: stream.deviceKind,
        start: YEAR_START,
        end: YEAR_END,
        resolution,
        include: new Set(['default', 'energy'] as const),
        channels: stream.channels,
        timezone: 'Europe/Berlin',
        socScale: 'percent',
      }),
    });

  const ep = { host: '127.0.0.1', port: 1502 };
  const site = new Site(
    demoSiteConfig(
      { inverter: ep, meter: { ...ep, port: 1503 } },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir: dir, pollSeconds: 60, batteryBlocks: 2 },
    ),
  );
  // the HTTP cases pay for the bearer-token check like every partner request does
  const auth = new AuthService({ db, config: site.config.auth, dataDir: dir, siteId: site.id, log: silentLogger() });
  auth.start();
  const { secret } = await addClient(db, { id: 'bench', devices: [...site.devices.keys()] }, Date.now());
  const app = await buildApp({ site, db, auth, logger: false, tariffQuota: site.config.limits.dynamicTariffs });
  const tokenRes = await app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: {
      authorization: `Basic ${Buffer.from(`bench:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: 'grant_type=client_credentials',
  });
  const headers = { authorization: `Bearer ${(tokenRes.json() as { access_token: string }).access_token}` };
  const iso = (ms: number) => new Date(ms).toISOString();
  const viaHttp = (resolution: TelemetryResolution) => async () => {
    const res = await app.inject({
      method: 'GET',
      headers,
      url: `/api/v1/devices/${stream.id}/telemetry?interval=${iso(YEAR_START)}/${iso(YEAR_END)}&resolution=${resolution}&include=default,energy`,
    });
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body.slice(0, 200)}`);
    return res.body;
  };

  const cases: [string, () => string | Promise<string>][] = [
    ['baseline SELECT * + JSON.stringify', baseline],
    ['queryTelemetry PT15M', viaQuery('PT15M')],
    ['queryTelemetry PT1H', viaQuery('PT1H')],
    ['queryTelemetry P1D', viaQuery('P1D')],
    ['HTTP GET telemetry PT15M (inject)', viaHttp('PT15M')],
    ['HTTP GET telemetry PT1H (inject)', viaHttp('PT1H')],
    ['HTTP GET telemetry P1D (inject)', viaHttp('P1D')],
  ];
  const samples = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  const sizes = new Map<string, number>();
  for (const [name, fn] of cases) sizes.set(name, (await fn()).length); // warm-up
  // Interleaved so drift (GC, thermal) hits every case alike.
  for (let r = 0; r < RUNS; r++) {
    for (const [name, fn] of cases) {
      (globalThis as { gc?: () => void }).gc?.();
      const t0 = performance.now();
      await fn();
      samples.get(name)!.push(performance.now() - t0);
    }
  }
  const base = median(samples.get(cases[0]![0])!);
  const rows = db.prepare('SELECT count(*) FROM buckets WHERE stream = ?').pluck().get(key) as number;

  console.log(
    `filled ${rows} buckets (one year, 1-minute readings) in ${(fillMs / 1000).toFixed(1)} s; ${RUNS} runs each`,
  );
  console.log('');
  console.log('| case                                 | median ms | JSON kB | ratio vs baseline |');
  console.log('|--------------------------------------|----------:|--------:|------------------:|');
  for (const [name] of cases) {
    const m = median(samples.get(name)!);
    const kb = (sizes.get(name)! / 1024).toFixed(0);
    console.log(
      `| ${name.padEnd(36)} | ${m.toFixed(2).padStart(9)} | ${kb.padStart(7)} | ${(m / base).toFixed(2).padStart(16)}x |`,
    );
  }
  await app.close();
  auth.stop();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
