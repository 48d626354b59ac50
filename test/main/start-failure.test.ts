/**
 * A Daemon.start that fails part-way stops exactly what it had started, and the caller hears the
 * original error. Real parts throughout: the simulator over Modbus TCP, an aedes broker as the
 * uplink, the SQLite store in a temp data dir, and a real socket holding the HTTP port.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SiteConfig } from '../../src/config/types.js';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Daemon, type DaemonContext } from '../../src/main.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { getJson, waitFor } from '../support/demo.js';
import { capturingLogger } from '../support/uplink.js';

const POLL_S = 1;
const ERROR = 50;

/** aedes on a free port, counting the MQTT clients it sees come and go. */
async function countingBroker() {
  const broker = await Aedes.createBroker();
  const seen = { connects: 0, disconnects: 0 };
  broker.on('client', () => seen.connects++);
  broker.on('clientDisconnect', () => seen.disconnects++);
  const server = createServer((s) => broker.handle(s));
  await listen(server, 0);
  return {
    url: `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    connectedNow: () => broker.connectedClients,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => broker.close(() => r()));
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

let clock: ScaledClock;
let servers: SimServers;
let broker: Awaited<ReturnType<typeof countingBroker>>;
let dataDir: string;
let squatter: Server;
const stopAfter: Daemon[] = [];

beforeEach(async () => {
  // a one-second poll is 17 ms of real time: a poller left running is heard at once
  clock = new ScaledClock(60);
  servers = await startSimServers(new SimSite(undefined, clock.now()), clock, { host: '127.0.0.1' });
  broker = await countingBroker();
  dataDir = mkdtempSync(join(tmpdir(), 'sitegw-start-failure-'));
  squatter = createServer();
  await listen(squatter, 0);
});

afterEach(async () => {
  for (const d of stopAfter.splice(0)) await d.stop();
  await new Promise<void>((r) => squatter.close(() => r()));
  await broker.close();
  await servers.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function siteConfig(httpPort: number): SiteConfig {
  const config = demoSiteConfig(servers, {
    httpHost: '127.0.0.1',
    httpPort,
    dataDir,
    pollSeconds: POLL_S,
    batteryBlocks: 2,
    uplinkUrl: broker.url,
  });
  // aedes speaks MQTT 3.1.1
  Object.assign(config.uplink!, { protocolVersion: 4, reconnectMaxSeconds: 1 });
  return config;
}

/** Modbus requests the simulator has received, all units */
function requests(): number {
  const f = servers.faults;
  return (
    f.requests('inverter', 1) +
    f.requests('inverter', 2) +
    f.requests('inverter', 3) +
    f.requests('meter', 1) +
    f.requests('meter', 2)
  );
}

it('the HTTP port is taken: start rejects with EADDRINUSE, nothing it started keeps running, and a start on a free port works', async () => {
  const takenPort = (squatter.address() as AddressInfo).port;
  const { log, lines } = capturingLogger();
  let ctx: DaemonContext | undefined;
  const failed: unknown = await Daemon.start({
    config: siteConfig(takenPort),
    clock,
    log,
    // the failure comes with the uplink connected, so its going is something the broker can see
    beforePolling: async (c) => {
      ctx = c;
      await waitFor('the uplink connected', () => broker.connectedNow() === 1);
    },
  }).then(
    () => 'started',
    (err: unknown) => err,
  );
  expect(failed).toMatchObject({ code: 'EADDRINUSE', syscall: 'listen', port: takenPort });

  await waitFor(
    `the broker sees the uplink go (seen: ${JSON.stringify(broker.seen)})`,
    () => broker.seen.disconnects === 1,
  );
  expect(broker.connectedNow()).toBe(0);
  // the store is closed: the handle says so, and SQLite removed the WAL when its last connection closed
  expect(ctx!.db.open).toBe(false);
  expect(existsSync(join(dataDir, 'sitegw.db-wal'))).toBe(false);
  // the poller had been started; it polls no more (twenty poll periods of silence)
  const polledBefore = requests();
  await clock.sleep(20 * POLL_S * 1000);
  expect(requests()).toBe(polledBefore);
  expect(broker.seen.connects).toBe(1);
  // undoing went without errors, and the log says why the features stopped
  expect(lines().filter((l) => (l.level as number) >= ERROR)).toEqual([]);
  expect(lines().some((l) => String(l.msg).startsWith('start failed') && String(l.reason).includes('EADDRINUSE'))).toBe(
    true,
  );

  // the same data dir on a free port: the store opens, devices are polled, the uplink connects, HTTP answers
  const daemon = await Daemon.start({ config: siteConfig(0), clock, log });
  stopAfter.push(daemon);
  expect((await getJson(`${daemon.url}/healthz`)).status).toBe(200);
  await waitFor('polling again', () => requests() > polledBefore + 5);
  await waitFor('the uplink connected again', () => broker.connectedNow() === 1 && daemon.uplink!.health().connected);
  expect(broker.seen.connects).toBe(2);
});

it('an error while undoing is logged, the other features still stop, and the start rejects with its own error', async () => {
  const { log, lines } = capturingLogger();
  let ctx: DaemonContext | undefined;
  const failed: unknown = await Daemon.start({
    config: siteConfig(0),
    clock,
    log,
    beforePolling: async (c) => {
      ctx = c;
      await waitFor('the uplink connected', () => broker.connectedNow() === 1);
      // the bucket flush (closeUntil on a stopped bucketer) now fails while undoing
      c.bucketer.stop();
      throw new Error('pre-fill failed');
    },
  }).then(
    () => 'started',
    (err: unknown) => err,
  );
  expect(failed).toBeInstanceOf(Error);
  expect((failed as Error).message).toBe('pre-fill failed');
  const errors = lines().filter((l) => (l.level as number) >= ERROR);
  expect(errors.map((l) => l.feature)).toEqual(['bucket flush']);
  // what comes after the failed bucket flush (undone last-first) still stops: the uplink, the store
  await waitFor('the broker sees the uplink go', () => broker.seen.disconnects === 1);
  expect(ctx!.db.open).toBe(false);
  // the poller never started, and nothing else polls
  await clock.sleep(20 * POLL_S * 1000);
  expect(requests()).toBe(0);
});
