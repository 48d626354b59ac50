/**
 * One worker of the fleet run (bench/fleet.ts): a slice of the simulated sites, each a real
 * Site, Bucketer, CloseTimer and Uplink on its own SQLite database (outbox included), all on one
 * ScaledClock shared with the other workers. Readings are synthesised every poll period instead
 * of polled over Modbus: the run measures the uplink, not the devices. Sites of the offline group
 * reach the broker through a proxy here that the run can cut ("offline for an hour").
 *
 * Controlled over IPC: {cmd: 'offline'|'online'|'stopProducing'|'status'|'stop'}.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ScaledClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { Site } from '../../src/site/site.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { Bucketer } from '../../src/telemetry/bucketer.js';
import { CloseTimer } from '../../src/telemetry/close-timer.js';
import { Uplink } from '../../src/uplink/feature.js';

export interface WorkerArgs {
  ids: string[];
  offline: string[];
  brokerPort: number;
  speed: number;
  /** site clock at realStart */
  origin: number;
  realStart: number;
  jitterSeconds: number;
  dir: string;
}

const POLL_MS = 60_000;
const args = JSON.parse(process.argv[2]!) as WorkerArgs;
const clock = new ScaledClock(args.speed, args.origin + (Date.now() - args.realStart) * args.speed);

function siteYaml(id: string, port: number): string {
  return `
site: { id: ${id}, name: Fleet ${id}, timezone: Europe/Berlin, currency: EUR, location: { latitude: 52.5, longitude: 13.4 } }
devices:
  - { id: inverter-1, role: inverter, profile: sunspec, connection: { type: tcp, host: 10.0.0.1, unitId: 1 } }
  - { id: battery-1, role: battery, profile: sunspec, inverter: inverter-1, connection: { type: tcp, host: 10.0.0.1, unitId: 2 } }
  - { id: grid-meter, role: grid-meter, profile: sunspec, connection: { type: tcp, host: 10.0.0.2, unitId: 1 } }
  - { id: house-1, role: consumption-meter, profile: sunspec, connection: { type: tcp, host: 10.0.0.3, unitId: 1 } }
uplink: { url: 'mqtt://127.0.0.1:${port}', reconnectMaxSeconds: 5, publishJitterSeconds: ${args.jitterSeconds} }
`;
}

/** A cuttable path to the broker: while `blocked`, connections are refused and open ones cut. */
class Cut {
  blocked = false;
  private readonly sockets = new Set<Socket>();
  readonly server: Server = createServer((s) => {
    if (this.blocked) return void s.destroy();
    const up = connect(args.brokerPort, '127.0.0.1');
    this.sockets.add(s).add(up);
    const drop = () => {
      s.destroy();
      up.destroy();
      this.sockets.delete(s);
      this.sockets.delete(up);
    };
    s.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
    s.pipe(up).pipe(s);
  });
  cut(): void {
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
  }
}

interface SiteRun {
  id: string;
  db: Database;
  site: Site;
  bucketer: Bucketer;
  uplink: Uplink;
  close: CloseTimer;
  cut?: Cut;
}

const runs: SiteRun[] = [];
for (const id of args.ids) {
  let port = args.brokerPort;
  let cut: Cut | undefined;
  if (args.offline.includes(id)) {
    cut = new Cut();
    await new Promise<void>((r) => cut!.server.listen(0, '127.0.0.1', r));
    port = (cut.server.address() as { port: number }).port;
  }
  const r = parseConfig(siteYaml(id, port), `${id}.yaml`);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const site = new Site(r.config);
  const db = openDatabase(join(args.dir, `${id}.db`));
  const bus = new EventBus();
  const bucketer = new Bucketer({ db, streams: site.streams(), pollPeriodMs: POLL_MS, bus });
  bucketer.start();
  const uplink = new Uplink({
    config: r.config.uplink!,
    db,
    site,
    bus,
    clock,
    log: silentLogger(),
    socScale: 'percent',
    version: 'fleet-bench',
  });
  uplink.start();
  const close = new CloseTimer(clock, POLL_MS * 1.5, (b) => {
    bucketer.closeUntil(b);
    return true;
  });
  close.start();
  runs.push({ id, db, site, bucketer, uplink, close, ...(cut ? { cut } : {}) });
}

let i = 0;
const poll = setInterval(() => {
  const t = clock.now();
  i++;
  for (const r of runs) {
    for (const st of r.site.streams()) {
      const w = 1000 * Math.sin(i / 50 + st.id.length + r.id.length);
      r.bucketer.ingest({
        streamId: st.id,
        ts: t,
        values: { power_W: w, power_AC_W: w, power_DC_W: -w, soc: 50 + (i % 40), soh: 98, state: 'ok' },
      });
    }
  }
}, POLL_MS / args.speed);

process.on('message', async (m: { cmd: string; ids?: string[] }) => {
  if (m.cmd === 'offline' || m.cmd === 'online') {
    for (const r of runs)
      if (r.cut && m.ids!.includes(r.id)) m.cmd === 'offline' ? r.cut.cut() : (r.cut.blocked = false);
    process.send!({ ok: m.cmd });
  } else if (m.cmd === 'stopProducing') {
    clearInterval(poll);
    for (const r of runs) r.close.stop();
    process.send!({ ok: m.cmd });
  } else if (m.cmd === 'status') {
    let depth = 0;
    let connected = 0;
    let delivered = 0;
    for (const r of runs) {
      const h = r.uplink.health();
      // the outbox's rows and the telemetry waiting in the buckets (uplink/pending.ts)
      depth += h.outbox.depth;
      if (h.connected) connected++;
      delivered += h.delivered;
    }
    process.send!({ depth, connected, delivered, sites: runs.length, siteNow: clock.now() });
  } else if (m.cmd === 'stop') {
    for (const r of runs) {
      await r.uplink.stop();
      r.db.close();
      r.cut?.server.close();
    }
    process.send!({ ok: 'stop' }, () => process.exit(0));
  }
});
process.send!({ ready: runs.length });
