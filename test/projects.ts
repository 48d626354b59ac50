/**
 * Which vitest project each test file belongs to; vitest.config.ts builds its projects from
 * these lists and `npm run test:projects` checks that every test file lands in exactly one.
 *
 * - slow: crash, soak, attack and fuzz suites, the arm64 smoke run, and files a CI run measured
 *   at 30 s or more (vitest's results cache of 2026-11-24: realtime 66 s, profiles corpus 41 s,
 *   uplink 40 s; crash 173 s and soak 56 s are in their folders; clock-steps, two daemons under
 *   libfaketime waiting for quarter hours, 43 s here, and disk-full, three starts on a tmpfs, 31 s).
 * - e2e: a real daemon, real sockets (HTTP, WebSocket, Modbus TCP, RTU over socat, MQTT) or a
 *   child process.
 * - unit: everything else: in-process code, fastify inject() at most. The check fails a unit
 *   file that starts a daemon, a server, a broker or a child process (UNIT_FORBIDDEN).
 * A folder entry ends in '/' and takes every test file under it.
 */
export const SLOW: readonly string[] = [
  'test/attack/',
  'test/crash/',
  'test/fuzz/',
  'test/soak/',
  'test/e2e/clock-steps.test.ts',
  'test/e2e/clock-glitch.test.ts',
  'test/e2e/clock-invariants.test.ts',
  'test/e2e/disk-full.test.ts',
  'test/e2e/storage-readonly.test.ts',
  'test/faults/storage-invariants.test.ts',
  'test/e2e/limits.test.ts',
  'test/e2e/gridop-limits.test.ts',
  'test/e2e/limits-vendors.test.ts',
  'test/e2e/homeassistant-limits.test.ts',
  'test/e2e/control-failsafe.test.ts',
  'test/e2e/control-crash-restore.test.ts',
  'test/e2e/control-plan.test.ts',
  'test/e2e/optimiser-loop.test.ts',
  'test/e2e/optimiser-curtail.test.ts',
  'test/e2e/realtime.test.ts',
  'test/e2e/uplink.test.ts',
  'test/profiles/corpus.test.ts',
  'test/runtime/arm64-smoke.test.ts',
  'test/runtime/gc-churn.test.ts',
];

export const E2E: readonly string[] = [
  'test/api/linger.test.ts',
  'test/api/ws-server.test.ts',
  'test/auth/commands.test.ts',
  'test/auth/primitives.test.ts',
  'test/cli/',
  'test/config/check.test.ts',
  'test/config/examples-check.test.ts',
  'test/config/grid-operator.test.ts',
  'test/config/uplink-files.test.ts',
  'test/conformance/',
  'test/consumer/',
  'test/demo/',
  'test/e2e/',
  'test/gridop/client-e2e.test.ts',
  'test/gridop/mirror.test.ts',
  'test/gridop/published.test.ts',
  'test/gridop/schema-crosscheck.test.ts',
  'test/gridop/xml.test.ts',
  'test/homeassistant/link-advice.test.ts',
  'test/main/',
  'test/modbus/rtu-bus.test.ts',
  'test/modbus/scan.test.ts',
  'test/modbus/tcp-bus.test.ts',
  'test/optimiser/lp-crosscheck.test.ts',
  'test/ops/backup-restart.test.ts',
  'test/ops/damage-credentials.test.ts',
  'test/ops/wal-vanished.test.ts',
  'test/ops/http.test.ts',
  'test/ops/integrity.test.ts',
  'test/ops/watchdog.test.ts',
  'test/poller/',
  'test/profiles/battery-aggregate.test.ts',
  'test/profiles/control-vendors.test.ts',
  'test/profiles/corpus-scan.test.ts',
  'test/profiles/limit-vendors.test.ts',
  'test/profiles/limit.test.ts',
  'test/profiles/meter-sign.test.ts',
  'test/profiles/scan-chain-battery.test.ts',
  'test/profiles/sdm630-e2e.test.ts',
  'test/profiles/status-unknown-e2e.test.ts',
  'test/runtime/',
  'test/sim/sdm630-wire.test.ts',
  'test/sim/sungrow-control.test.ts',
  'test/sim/sunspec-wire.test.ts',
  'test/store/file-mode.test.ts',
  'test/store/read-only-copies.test.ts',
  'test/store/write-tx.test.ts',
  'test/tooling/',
  'test/uplink/containment.test.ts',
  'test/uplink/drain-disk.test.ts',
  'test/uplink/link.test.ts',
  'test/uplink/seq-seed.test.ts',
  'test/uplink/state-disk.test.ts',
];

/** what a unit test file (or a test/ helper it imports) must not contain */
export const UNIT_FORBIDDEN: readonly RegExp[] = [
  /\bdemoSite\(|\bstartDemo\(/,
  /\bstartSimServers\(|\bstartSimRtuServer\(|\bserveImage\(|\bstartCorpusSite\(/,
  /\.listen\(|\bcreateServer\(|new WebSocket\(/,
  /from 'node:child_process'|child-daemon\.js|support\/cli\.js/,
  /from 'aedes'|mqtt-brokers\.js/,
  /support\/postgres\.js/,
];

/** vitest globs for a list: a folder takes every test file under it */
export const globs = (entries: readonly string[]): string[] =>
  entries.map((e) => (e.endsWith('/') ? `${e}**/*.test.ts` : e));
