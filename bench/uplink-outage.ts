/**
 * The uplink after an outage: `--days` of telemetry pending in the recent buckets of a site of
 * `--streams` streams (a month at 272 streams: 783k rows), as the close stamps them (store/
 * uplink-telemetry.ts: each quarter hour's last row carries its message's seq and `written`, the
 * rows below it MEMBER), none acknowledged. Measured under the unit's node flags, CPU time:
 *  - the drain's catch-up, its READ_AHEAD (256) messages asked for a read, each acknowledged
 *    before the next, through uplink/pending.ts (the heads read once and kept, at most
 *    ROWS_PER_READ rows rebuilt a read) against, in the same run, the store's per-read path the
 *    drain used before (telemetryAfter: every read went through every recent row and rebuilt
 *    all 256); in all, and the longest read (what the limits loop may wait);
 *  - 20 scrapes of the pending count (/metrics, /healthz, the status message) through Pending
 *    (read again only after a close, an acknowledgement or a drop) against the store's count.
 * The streams are not the site's, so no message body is built: what is measured is the reads.
 *
 *   node --import tsx bench/uplink-outage.ts [--streams 272] [--days 30]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/store/db.js';
import { STREAM_SPAN } from '../src/store/recent-key.js';
import { streamKey } from '../src/store/streams.js';
import { MEMBER, telemetryAfter, telemetryStats } from '../src/store/uplink-telemetry.js';
import { READ_AHEAD } from '../src/uplink/drain.js';
import { Pending } from '../src/uplink/pending.js';
import { unitRuntime } from '../test/support/unit-runtime.js';

const { values } = parseArgs({
  options: { streams: { type: 'string', default: '272' }, days: { type: 'string', default: '30' } },
});
const STREAMS = Number(values.streams);
const DAYS = Number(values.days);

if (process.env.BENCH_ROLE !== 'run') {
  // again, under the unit's flags
  const runtime = unitRuntime();
  const r = spawnSync(process.execPath, [...runtime.args, '--import', 'tsx', ...process.argv.slice(1)], {
    env: { ...process.env, BENCH_ROLE: 'run' },
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}

const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-outage-'));
try {
  const db = openDatabase(join(dir, 'sitegw.db'));
  const keys = Array.from({ length: STREAMS }, (_, i) => streamKey(db, `s${i}`));
  const insert = db.prepare(
    'INSERT INTO buckets_recent (k, stream, start_s, covered_ms, power_W, energy_in, energy_out, seq, written) VALUES (?, ?, ?, 900000, ?, ?, ?, ?, ?)',
  );
  const t0 = 1_790_000_100 - (1_790_000_100 % 900);
  let seq = MEMBER;
  db.transaction(() => {
    for (let q = 0; q < DAYS * 96; q++) {
      const s = t0 + q * 900;
      seq++;
      keys.forEach((key, i) => {
        const last = i === keys.length - 1;
        insert.run(s * STREAM_SPAN + key, key, s, 123.45, 1000 + q, -q, last ? seq : MEMBER, last ? s * 1000 : null);
      });
    }
  })();
  const rows = db.prepare('SELECT COUNT(*) FROM buckets_recent').pluck().get() as number;
  const messages = seq - MEMBER;
  const cpu = (f: () => void) => {
    const c0 = process.cpuUsage();
    f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
  };
  const ctx = { siteId: 'bench', stream: () => undefined, socScale: 'percent' as const };

  let beforeReads = 0;
  let beforeLongest = 0;
  const before = cpu(() => {
    for (let cursor = 0; ; beforeReads++) {
      let got: ReturnType<typeof telemetryAfter> = [];
      beforeLongest = Math.max(
        beforeLongest,
        cpu(() => void (got = telemetryAfter(db, cursor, READ_AHEAD))),
      );
      if (got.length === 0) break;
      cursor = got.at(-1)!.seq;
    }
  });
  const pending = new Pending(db, ctx, () => Date.now());
  let nowReads = 0;
  let nowLongest = 0;
  const now = cpu(() => {
    // no stream is the site's: each message counts as sent once read, as one with nothing to send
    for (let cursor = 0; pending.through < seq; nowReads++) {
      nowLongest = Math.max(
        nowLongest,
        cpu(() => void pending.read(cursor, READ_AHEAD)),
      );
      cursor = pending.through;
    }
  });
  const fresh = new Pending(db, ctx, () => Date.now());
  const scrapesBefore = cpu(() => {
    for (let i = 0; i < 20; i++) telemetryStats(db, 0);
  });
  const scrapesNow = cpu(() => {
    for (let i = 0; i < 20; i++) fresh.stats();
  });
  console.log(
    `${STREAMS} streams, ${DAYS} days pending: ${rows} recent rows, ${messages} messages; ${process.version}, the unit's flags; CPU ms`,
  );
  console.log('');
  console.log('| after an outage | before (the store per read) | now (uplink/pending.ts) | now / before |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| the drain's catch-up, ${READ_AHEAD} asked a read | ${before.toFixed(0)} ms (${beforeReads} reads) | ${now.toFixed(0)} ms (${nowReads} reads) | ${(now / before).toFixed(3)}× |`,
  );
  console.log(
    `| its longest read | ${beforeLongest.toFixed(0)} ms | ${nowLongest.toFixed(0)} ms | ${(nowLongest / beforeLongest).toFixed(3)}× |`,
  );
  console.log(
    `| 20 scrapes of the pending count, no close between | ${scrapesBefore.toFixed(0)} ms | ${scrapesNow.toFixed(0)} ms | ${(scrapesNow / scrapesBefore).toFixed(3)}× |`,
  );
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
