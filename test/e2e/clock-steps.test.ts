import { mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { BUILT_AT } from '../../src/version.js';
import { getJson, waitFor } from '../support/demo.js';
import { type FakeClockRun, LIBFAKETIME, runUnderFakeClock, setFakeClock, timesyncFlag } from '../support/faketime.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';

if (!LIBFAKETIME)
  console.warn('SKIPPED: clock-step tests need libfaketime (apt-get install faketime; .ci/run installs it)');

describe.skipIf(!LIBFAKETIME)('wall-clock steps under libfaketime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-clock-'));
  const offsetFile = join(dir, 'faketime');
  const dataDir = join(dir, 'data');
  let servers: SimServers;
  let broker: TestBroker;
  let sub: Collector;
  let config: string;
  const daemons: FakeClockRun[] = [];

  let offset = 0;
  const setClock = (at: number) => {
    offset = at - Date.now();
    setFakeClock(offsetFile, at);
  };
  /** what the daemon's wall clock reads now */
  const daemonNow = () => Date.now() + offset;
  /** requests the simulator has received from the daemon, all devices */
  const requests = () => [1, 2, 3, 4].reduce((n, u) => n + servers.faults.requests('inverter', u), 0);
  const pollsAfter = async (what: string) => {
    const before = requests();
    await waitFor(`a poll after ${what}`, () => requests() > before + 2, 10_000);
  };
  const telemetry = () => sub.json<{ seq: number; time: string }>('telemetry');
  const allSeqs = () => sub.json<{ seq?: number }>().flatMap((m) => (typeof m.seq === 'number' ? [m.seq] : []));
  const nextBoundary = (from: number) => Math.floor(from / BUCKET_MS) * BUCKET_MS + BUCKET_MS;

  // the kernel's NTP state as timesyncd shows it: not synchronised until a test says so
  const ntp = timesyncFlag(dir);

  async function start(): Promise<FakeClockRun> {
    const d = await runUnderFakeClock(config, offsetFile, ntp.env);
    daemons.push(d);
    return d;
  }

  async function stop(d: FakeClockRun): Promise<void> {
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
  }

  beforeAll(async () => {
    const clock = new ScaledClock(1);
    servers = await startSimServers(new SimSite(undefined, clock.now()), clock, { host: '127.0.0.1' });
    broker = await aedesBroker();
    sub = await collect(broker.url, 'sitegw/#');
    config = join(dir, 'site.yaml');
    const yaml = demoSiteYaml(servers, {
      httpHost: '127.0.0.1',
      httpPort: 0,
      dataDir,
      pollSeconds: 1,
      batteryBlocks: 2,
      uplinkUrl: broker.url,
    }).replace(/^uplink:\n/m, 'uplink:\n  publishJitterSeconds: 0\n  protocolVersion: 4\n');
    writeFileSync(config, yaml);
  }, 60_000);

  afterAll(async () => {
    for (const d of daemons) if (d.child.exitCode === null) d.child.kill('SIGKILL');
    await sub?.close();
    await broker?.close();
    await servers?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('steps back 10 minutes and forward a day: polling goes on, health says so, labels never go back', async () => {
    // the daemon's clock starts a minute into a quarter hour: started within seconds of one, it
    // polled on both sides of it, and the bucket before was sent first (failed in the 10 s before
    // a quarter hour: b1 was then the boundary after next, and the step went past the next one)
    setClock(nextBoundary(Date.now()) + 60_000);
    const d = await start();
    // once it polls (a start takes seconds under tsx): 3 s before a quarter hour
    const b1 = nextBoundary(daemonNow() + 10_000);
    setClock(b1 - 3_000);
    // a forward step is held until confirmed: here by NTP's first synchronisation, as a Pi's boot
    // clock is set (the glitch without it: test/e2e/clock-glitch.test.ts)
    await waitFor(
      'the step to b1 confirmed',
      async () => {
        if (d.out().includes('wall clock stepped forward')) ntp.sync();
        return d.out().includes('wall clock step confirmed');
      },
      10_000,
    );
    // the first bucket closes at its boundary (poll 1 s: grace 1.5 s)
    await waitFor('the first bucket sent', () => telemetry().length > 0, 30_000).catch((e) => {
      console.log(d.out().slice(-6000), JSON.stringify(sub.messages.slice(0, 5)));
      throw e;
    });
    expect(telemetry().map((m) => Date.parse(m.time))).toEqual([b1 - BUCKET_MS]);

    // ten minutes back from wherever the daemon's clock is (a loaded machine took a while to see the bucket)
    setClock(daemonNow() - 600_000);
    await waitFor('the step back logged', () => d.out().includes('wall clock stepped back'), 10_000);
    let mark = d.out().length;
    await pollsAfter('the step back');
    const h = await getJson(`${d.url}/healthz`);
    expect(h.status).toBe(200);
    expect(h.body.problems.join('\n')).toMatch(/wall clock stepped back by (59\d|60\d) s/);
    expect(h.body.problems.join('\n')).toMatch(/not recorded until it passes/);
    expect(h.body.uptimeSeconds).toBeGreaterThanOrEqual(0);

    const b2 = nextBoundary(b1 + 86_400_000);
    // NTP lost (timesyncd's flag gone), then a day forward that it sets once it is back
    ntp.unsync();
    await pollsAfter('NTP lost');
    mark = d.out().length;
    // NTP's first synchronisation (a stale boot clock set right) confirms the step at once; any
    // other forward step waits (test/e2e/clock-glitch.test.ts)
    setClock(b2 - 3_000);
    await waitFor('the step forward logged', () => d.out().includes('wall clock stepped forward', mark), 10_000);
    // timesyncd writes its flag once it has set the clock
    ntp.sync();
    await waitFor('the step confirmed', () => d.out().includes('wall clock step confirmed', mark), 10_000);
    await pollsAfter('the step forward');
    expect((await getJson(`${d.url}/healthz`)).body.problems.join('\n')).toMatch(/stepped forward by 8\d{4} s/);
    // the bucket of the new present closes at its own boundary, not a wait planned on the old time later
    await waitFor(
      'a bucket of the next day sent',
      () => telemetry().some((m) => Date.parse(m.time) === b2 - BUCKET_MS),
      30_000,
    );
    const times = telemetry().map((m) => Date.parse(m.time));
    // the ten minutes the clock went back to lie in the bucket already sent: it is not sent again,
    // and nothing else before the newest label is (the seconds after b1 before the step are a bucket)
    expect(times.filter((t) => t === b1 - BUCKET_MS)).toHaveLength(1);
    expect(times.every((t) => t === b1 - BUCKET_MS || t === b1 || t === b2 - BUCKET_MS)).toBe(true);
    // uptime on the monotonic clock: seconds, not a day
    expect((await getJson(`${d.url}/healthz`)).body.uptimeSeconds).toBeLessThan(600);
    await stop(d);
    ntp.unsync();
  }, 120_000);

  it('a fresh database made at a boot in 2020 continues the seq, labels nothing until the clock is set', async () => {
    const before = allSeqs();
    expect(before.length).toBeGreaterThan(0);
    // damage found at boot: the database is moved aside and a fresh one made, before NTP
    const fd = openSync(join(dataDir, 'sitegw.db'), 'r+');
    writeSync(fd, Buffer.alloc(100, 0x5a), 0, 100, 0);
    const sent = telemetry().length;
    const heard = sub.messages.length;
    setClock(Date.parse('2020-01-01T11:00:00Z'));
    const d = await start();
    expect(d.out()).toContain('the database is damaged');
    await waitFor('the clock refused', () => d.out().includes('wall clock before this build'), 10_000);
    await pollsAfter('a start in 2020');
    const h = await getJson(`${d.url}/healthz`);
    expect(h.body.problems.join('\n')).toMatch(/reads 2020-01-01T11:0.*before this build/);
    // issue 41, finding 6: nothing is labelled while the clock is implausible, not even state
    // messages (topology, availability, status): they wait and go once it is set
    const times = () =>
      sub.messages
        .slice(heard)
        .map((m) => (JSON.parse(m.payload) as { time?: string }).time)
        .filter((t): t is string => typeof t === 'string');
    expect(times().filter((t) => Date.parse(t) < BUILT_AT)).toEqual([]);

    const b3 = nextBoundary(Date.now() + 2 * 86_400_000);
    setClock(b3 - 3_000);
    await waitFor('a bucket after the clock was set', () => telemetry().length > sent, 30_000);
    await waitFor('the topology sent once the clock is set', () =>
      sub.messages.slice(heard).some((m) => m.topic.endsWith('/topology') && m.payload.length > 0),
    );
    expect(times().filter((t) => Date.parse(t) < BUILT_AT)).toEqual([]);
    const after = telemetry().slice(sent);
    expect(after.map((m) => Date.parse(m.time))).toEqual([b3 - BUCKET_MS]);
    expect(Math.min(...after.map((m) => Date.parse(m.time)))).toBeGreaterThanOrEqual(BUILT_AT);
    // every message of the second daemon is above every seq the site sent before
    const later = allSeqs().slice(before.length);
    expect(later.length).toBeGreaterThan(0);
    expect(Math.min(...later)).toBeGreaterThan(Math.max(...before));
    await stop(d);
  }, 120_000);
});
