/**
 * The daemon alone, as `sitegw run --config FILE` runs it, for the crash test to SIGKILL: the
 * only difference is the clock. The test's simulator and every incarnation of this process share
 * one accelerated clock (SITEGW_CLOCK = "speed,originSimMs,originRealMs"), so simulated time goes
 * on across restarts as it would on real time; `sitegw run` has no such option, and the demo
 * restarts its clock and its simulator with the daemon.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScaledClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/log.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import { Daemon } from '../../src/main.js';
import { parseConfig } from '../../src/profiles/site-config.js';

const [speed, originSim, originReal] = (process.env.SITEGW_CLOCK ?? '').split(',').map(Number) as [
  number,
  number,
  number,
];
const file = process.argv[2]!;
const result = parseConfig(readFileSync(file, 'utf8'), file);
if (!result.ok) {
  process.stderr.write(`${JSON.stringify(result.errors)}\n`);
  process.exit(1);
}
const clock = new ScaledClock(speed, originSim + (Date.now() - originReal) * speed);
const daemon = await Daemon.start({ config: result.config, clock, log: createLogger() });
// the demo client in the data directory, once, so the test reads /metrics and the API as a partner would
if (process.env.SITEGW_CRASH_CREDENTIALS && !existsSync(join(result.config.dataDir, 'demo-credentials.json')))
  await ensureDemoCredentials(daemon);
process.stdout.write(`started ${daemon.url}\n`);
process.once('SIGTERM', () => {
  void daemon.stop().then(() => process.exit(0));
});
