import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { freePort } from './free-port.js';

/** A broker the uplink tests talk to: started, stopped (connections cut) and started again on the same port. */
export interface TestBroker {
  kind: 'aedes' | 'mosquitto';
  /** MQTT protocol version the broker speaks for the gateway (aedes: 3.1.1 only) */
  protocolVersion: 4 | 5;
  port: number;
  url: string;
  /** mosquitto with `websockets`: the WebSocket listener's port (TLS like the MQTT one) */
  wsPort?: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface BrokerOptions {
  /** user → password; when given, every other login is refused */
  users?: Record<string, string>;
  /** aedes only: false = take the message in but never acknowledge it (no PUBACK, not forwarded) */
  accept?: (topic: string) => boolean;
}

export { freePort };

export const MOSQUITTO = (() => {
  const r = spawnSync('mosquitto', ['-h'], { encoding: 'utf8' });
  return r.error ? null : 'mosquitto';
})();

/** Says visibly, once per file, that the mosquitto tests do not run here. */
export function noteMosquittoSkipped(file: string): void {
  if (!MOSQUITTO)
    console.warn(
      `\n*** ${file}: mosquitto is not installed: its uplink tests are SKIPPED (apt-get install mosquitto; .ci/run installs it) ***\n`,
    );
}

/** aedes, in this process: MQTT 3.1.1. Retained messages live in its memory across stop/start. */
export async function aedesBroker(opts: BrokerOptions = {}): Promise<TestBroker> {
  const port = await freePort();
  const broker = await Aedes.createBroker({
    authenticate: (_client, username, password, done) => {
      if (!opts.users) return done(null, true);
      const ok = username !== undefined && opts.users[username] === password?.toString();
      if (ok) return done(null, true);
      const err = Object.assign(new Error('bad user name or password'), { returnCode: 4 as const });
      done(err, false);
    },
    authorizePublish: (_client, packet, done) => {
      if (!opts.accept || opts.accept(packet.topic)) done(null);
    },
  });
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  const b: TestBroker = {
    kind: 'aedes',
    protocolVersion: 4,
    port,
    url: `mqtt://127.0.0.1:${port}`,
    async start() {
      server = createServer((s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        broker.handle(s);
      });
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    },
    async stop() {
      if (!server) return;
      const s = server;
      server = null;
      for (const c of sockets) c.destroy();
      await new Promise<void>((r) => s.close(() => r()));
    },
    async close() {
      await b.stop();
      await new Promise<void>((r) => broker.close(() => r()));
    },
  };
  await b.start();
  return b;
}

/**
 * mosquitto run from its binary with a config file of our own in a temp dir (never the system
 * service). Persistence on, so retained messages survive a stop/start like a real broker's.
 */
export async function mosquittoBroker(
  opts: BrokerOptions & {
    tls?: { cafile: string; certfile: string; keyfile: string; requireCertificate?: boolean };
    websockets?: boolean;
  } = {},
): Promise<TestBroker> {
  if (!MOSQUITTO) throw new Error('mosquitto is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-mosq-'));
  const port = await freePort();
  const wsPort = opts.websockets ? await freePort() : undefined;
  // run as whoever runs the tests: as root, mosquitto would switch to its own user and could not read our temp dir
  const lines = [
    `user ${userInfo().username}`,
    `listener ${port} 127.0.0.1`,
    'persistence true',
    `persistence_location ${dir}/`,
    'autosave_interval 1',
    'log_dest none',
  ];
  // TLS settings belong to the listener above them
  const tls = opts.tls
    ? [
        `cafile ${opts.tls.cafile}`,
        `certfile ${opts.tls.certfile}`,
        `keyfile ${opts.tls.keyfile}`,
        ...(opts.tls.requireCertificate ? ['require_certificate true'] : []),
      ]
    : [];
  lines.push(...tls);
  // mosquitto 2.0 (libwebsockets) ignores a bind address here and listens on every interface, and
  // starts a websockets listener only next to a plain MQTT one (eclipse-mosquitto/mosquitto#2284)
  if (wsPort !== undefined) lines.push(`listener ${wsPort}`, 'protocol websockets', ...tls);
  if (opts.users) {
    const pw = join(dir, 'passwd');
    writeFileSync(pw, '');
    for (const [u, p] of Object.entries(opts.users)) {
      const r = spawnSync('mosquitto_passwd', ['-b', pw, u, p]);
      if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
    }
    lines.push('allow_anonymous false', `password_file ${pw}`);
  } else {
    lines.push('allow_anonymous true');
  }
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, lines.join('\n') + '\n');
  let proc: ChildProcess | null = null;
  const b: TestBroker = {
    kind: 'mosquitto',
    protocolVersion: 5,
    port,
    ...(wsPort !== undefined ? { wsPort } : {}),
    url: `${opts.tls ? 'mqtts' : 'mqtt'}://${opts.tls ? 'localhost' : '127.0.0.1'}:${port}`,
    async start() {
      proc = spawn('mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr!.on('data', (d) => (stderr += String(d)));
      const until = Date.now() + 10_000;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`mosquitto exited: ${stderr}`);
        if ((await canConnect(port)) && (wsPort === undefined || (await canConnect(wsPort)))) return;
        if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port}: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      const p = proc;
      proc = null;
      if (!p || p.exitCode !== null) return;
      await new Promise<void>((r) => {
        p.once('exit', () => r());
        p.kill('SIGTERM');
      });
    },
    async close() {
      await b.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await b.start();
  return b;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A consumer of the uplink: subscribes to `filter` and keeps every message it gets. */
export interface Collector {
  client: MqttClient;
  messages: { topic: string; payload: string; retain: boolean; qos: number }[];
  json<T = any>(topicSuffix?: string): T[];
  close(): Promise<void>;
}

export async function collect(url: string, filter: string, opts: IClientOptions = {}): Promise<Collector> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 200, clean: true, ...opts });
  const messages: Collector['messages'] = [];
  client.on('message', (topic, payload, packet) =>
    messages.push({ topic, payload: payload.toString(), retain: packet.retain, qos: packet.qos }),
  );
  await client.subscribeAsync(filter, { qos: 1 });
  // a reconnecting consumer subscribes again (clean session)
  client.on('connect', () => void client.subscribeAsync(filter, { qos: 1 }).catch(() => undefined));
  return {
    client,
    messages,
    json(suffix) {
      return messages
        .filter((m) => suffix === undefined || m.topic.endsWith(`/${suffix}`))
        .map((m) => JSON.parse(m.payload));
    },
    close: () => client.endAsync(true),
  };
}
