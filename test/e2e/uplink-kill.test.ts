/**
 * kill -9 in the middle of a replay: the gateway runs as a real child process (`sitegw demo
 * --mqtt`), is killed while the pre-filled day is still going out, and started again on the same
 * data directory. The broker (mosquitto) publishes the gateway's last will, and in the end the
 * consumer has every stored bucket with no seq missing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../src/store/driver.js';
import { sentSeq } from '../../src/store/uplink-telemetry.js';
import { expectConforming } from '../support/contract.js';
import { waitFor } from '../support/demo.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';
import {
  dedupe,
  deliveredOf,
  expectComplete,
  storedBuckets,
  telemetryKeys,
  undelivered,
  waitingOf,
} from '../support/uplink.js';

// the build that suits this Node (src/store/driver.ts)
const BetterSqlite3 = sqliteDriver();

noteMosquittoSkipped('test/e2e/uplink-kill.test.ts');

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PREFIX = 'sitegw/demo-site';

function startGateway(dataDir: string, url: string, history?: string): ChildProcess {
  const args = [
    join(ROOT, 'src/cli.ts'),
    'demo',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--speed',
    '200',
    '--mqtt',
    url,
  ];
  if (history) args.push('--history', history);
  // node itself with tsx's loader: the tsx launcher would run the gateway in a grandchild that a SIGKILL to the launcher leaves running
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, SITEGW_LOG_LEVEL: 'warn' },
  });
  return child;
}

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

describe.skipIf(!MOSQUITTO)('uplink: gateway killed with SIGKILL mid-replay (mosquitto, child process)', () => {
  let broker: TestBroker;
  let c: Collector;
  let child: ChildProcess | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-test-'));
  const dbFile = join(dataDir, 'sitegw.db');
  /** what waits: the outbox's rows and the telemetry above the durable ack position */
  const outboxDepth = () => {
    const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    try {
      return waitingOf(db).seqs.size;
    } finally {
      db.close();
    }
  };

  const undeliveredNow = () => {
    const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    try {
      return undelivered(db, c);
    } finally {
      db.close();
    }
  };

  const readOnly = <T>(fn: (db: InstanceType<typeof BetterSqlite3>) => T): T => {
    const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const telemetrySeqs = (messages: { topic: string; payload: string }[]) =>
    messages.filter((m) => m.topic.endsWith('/telemetry')).map((m) => JSON.parse(m.payload).seq as number);

  beforeAll(async () => {
    broker = await mosquittoBroker();
    c = await collect(broker.url, `${PREFIX}/#`, { clean: false, clientId: 'kill-test-consumer' });
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await c?.close();
    await broker?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing, and the broker tells the world the gateway went offline', async () => {
    child = startGateway(dataDir, broker.url, 'P1D');
    // the pre-filled day (96 buckets) goes out at 50 messages/s once the fill ends: kill it a third of the way in
    await waitFor('a third of the day delivered', () => telemetryKeys(dedupe(c)).length >= 32 * 7 || undefined, 60_000);
    child.kill('SIGKILL');
    await exited(child);
    const left = outboxDepth();
    expect(left, 'the kill landed after the replay had finished: nothing was mid-replay').toBeGreaterThan(10);
    // telemetry the broker acknowledged is on disk as acknowledged only up to the last save (hourly,
    // at stop, in the fold): the restart sends the telemetry above that position, and nothing below
    const durable = readOnly((db) => sentSeq(db));
    const sentBefore = new Set(telemetrySeqs(c.messages));
    const heardBefore = c.messages.length;

    // the last will, retained: a client arriving now learns the gateway is offline
    const late = await collect(broker.url, `${PREFIX}/status`);
    const will = await waitFor('retained status', () => late.messages.find((m) => m.retain), 5000);
    await late.close();
    const status = JSON.parse(will.payload);
    expect(status).toEqual({ v: 2, state: 'offline', siteId: 'demo-site' });

    child = startGateway(dataDir, broker.url);
    await waitFor('outbox drained after the restart', () => undeliveredNow() === 0 || undefined, 60_000);
    const online = await collect(broker.url, `${PREFIX}/status`);
    await waitFor(
      'status online again',
      () => online.messages.some((m) => JSON.parse(m.payload).state === 'online') || undefined,
      10_000,
    );
    await online.close();
    const after = telemetrySeqs(c.messages.slice(heardBefore));
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((q) => q <= durable)).toEqual([]);
    console.log(
      `[uplink-kill] durable telemetry position at the kill ${durable}; after the restart ${after.length} telemetry messages, ${after.filter((q) => sentBefore.has(q)).length} of them sent before the kill`,
    );
    child.kill('SIGTERM');
    await exited(child);
    child = null;

    // what the clean stop wrote last waits in the outbox for the next start: not expected yet
    const db = new BetterSqlite3(dbFile, { readonly: true });
    const { seqs: waitingSeqs, buckets: waiting } = waitingOf(db);
    db.close();
    const stored = new Set(
      [...storedBuckets(new BetterSqlite3(dbFile, { readonly: true }))].filter((k) => !waiting.has(k)),
    );
    // the broker acked what the gateway sent before it stopped: the consumer may still be reading it
    await deliveredOf(c, stored);
    const delivered = dedupe(c).filter((m) => !waitingSeqs.has(m.seq));
    expect(stored.size).toBeGreaterThan(96 * 7);
    expectComplete(delivered, stored);
  });

  it('sent only messages that conform to docs/asyncapi.yaml (the last will and the replay after the kill too)', () => {
    expectConforming(c, PREFIX);
  });
});
