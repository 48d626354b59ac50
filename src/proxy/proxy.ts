/**
 * The Modbus TCP proxy (docs/modbus-proxy.md): for each `modbusProxy:` entry a local Modbus TCP
 * port whose clients reach the target device on sitegw's own connection to it, in turn behind
 * sitegw's polls (src/modbus/bus-lanes.ts), answered from sitegw's own reads of the same
 * registers within the device's poll period, and refused every write by default. A device that
 * takes one connection, or an RS-485 line that takes one master, is then shared without the
 * other tools stealing sitegw's connection.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DeviceConfig, ModbusProxyConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Feature } from '../core/feature.js';
import { type GuestLane, GuestQueueFull } from '../modbus/bus-lanes.js';
import { ModbusError } from '../modbus/errors.js';
import type { QueuedBus } from '../modbus/queued-bus.js';
import type { ProfileRegistry } from '../profiles/registry.js';
import type { Site } from '../site/site.js';
import { type Answer, type ClientLimits, type CutOff, type Outcome, ProxyClient } from './client.js';
import { controlRegistersAt, firstProtected, type ManagedStorage, type RegisterRange } from './control-registers.js';
import { EXCEPTION, exceptionAnswer, type Frame, type ProxyRequest, readAnswer, writeAnswer } from './frames.js';
import { sendQueues } from './send-queue.js';

export interface ProxyDeps {
  entries: readonly ModbusProxyConfig[];
  site: Site;
  busFor: (device: DeviceConfig) => QueuedBus;
  clock: Clock;
  log: Logger;
  profiles: ProfileRegistry;
  /** the storage systems battery control manages; none while control is off */
  managed: () => readonly ManagedStorage[];
  registry?: Registry;
  limits?: Partial<ProxyLimits>;
}

export interface ProxyPortStatus {
  port: number;
  host: string;
  target: string;
  writes: 'deny' | 'allow';
  clients: { address: string; since: string; requests: number }[];
  /** answers by outcome since start */
  answers: Record<Outcome, number>;
  /** connections ended by reason since start ('full': refused at once, the port had its most clients) */
  ended: Record<CutOff | 'full', number>;
}

export interface ProxyStatus {
  ports: ProxyPortStatus[];
}

export interface ProxyLimits extends ClientLimits {
  /** clients of one port at a time */
  maxClients: number;
  /** clients of one port from one address at a time: its share (the API port's rule, docs/security.md) */
  maxClientsPerAddress: number;
  /**
   * least time between the starts of one client's requests, ms: a client reading back to back
   * against a fast device would otherwise keep the daemon's one event loop busy (bench/README.md
   * "Modbus proxy"); 100 requests a second is more than any monitoring tool asks
   */
  minGapMs: number;
}

const DEFAULT_LIMITS: ProxyLimits = {
  maxPending: 8,
  maxUnreadBytes: 64 * 1024,
  idleMs: 300_000,
  maxClients: 8,
  maxClientsPerAddress: 4,
  minGapMs: 10,
};
/**
 * how often the kernel is asked what clients that may hold more than maxUnreadBytes have not
 * taken (send-queue.ts): a client that stops reading is cut off within this of passing the limit
 */
const UNREAD_CHECK_MS = 1000;
/** distinct client addresses per port in /metrics; later ones are counted as 'other' */
const MAX_CLIENT_LABELS = 32;
/** one log line per port and kind of event in this many ms, with the count of those left out */
const LOG_EVERY_MS = 60_000;

const OUTCOMES: readonly Outcome[] = ['forwarded', 'cached', 'refused', 'write_denied', 'exception', 'failed'];
const ENDS: readonly (CutOff | 'full')[] = [
  'garbage',
  'flood',
  'unread',
  'idle',
  'gave-way',
  'closed',
  'stopped',
  'full',
];

class ProxyPort {
  readonly clients = new Set<ProxyClient>();
  readonly answers = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  readonly ended = Object.fromEntries(ENDS.map((e) => [e, 0])) as Record<CutOff | 'full', number>;
  readonly labels = new Set<string>();
  server: net.Server | null = null;
  /** the control registers on the target's unit (null: protect every register), found at the first write */
  protectedRegisters: Promise<RegisterRange[] | null> | null = null;
  private readonly logged = new Map<string, { at: number; left: number }>();

  constructor(
    readonly entry: ModbusProxyConfig,
    readonly device: DeviceConfig,
    readonly bus: QueuedBus,
  ) {}

  clientLabel(address: string): string {
    if (this.labels.has(address) || this.labels.size < MAX_CLIENT_LABELS) {
      this.labels.add(address);
      return address;
    }
    return 'other';
  }

  /** true when this kind of event may be logged now; `left` how many were not since */
  mayLog(kind: string): { ok: boolean; left: number } {
    const now = Date.now();
    const l = this.logged.get(kind);
    if (l && now - l.at < LOG_EVERY_MS) {
      l.left++;
      return { ok: false, left: 0 };
    }
    this.logged.set(kind, { at: now, left: 0 });
    return { ok: true, left: l?.left ?? 0 };
  }
}

export class ModbusProxy implements Feature {
  readonly name = 'modbus-proxy';
  private readonly ports: ProxyPort[] = [];
  private readonly limits: ProxyLimits;
  private requests: Counter<string> | undefined;
  private ends: Counter<string> | undefined;
  private unreadTimer: NodeJS.Timeout | undefined;
  private checkingUnread = false;

  constructor(private readonly d: ProxyDeps) {
    this.limits = { ...DEFAULT_LIMITS, ...d.limits };
  }

  async start(): Promise<void> {
    this.metrics();
    try {
      for (const entry of this.d.entries) {
        const device = this.d.site.devices.get(entry.target)?.config;
        // config's check names a missing target with its line; this is the last guard
        if (!device) throw new Error(`modbusProxy port ${entry.port}: no device '${entry.target}'`);
        const port = new ProxyPort(entry, device, this.d.busFor(device));
        this.ports.push(port);
        await this.listen(port);
      }
      this.unreadTimer = setInterval(() => void this.checkUnread(), UNREAD_CHECK_MS);
      this.unreadTimer.unref();
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.unreadTimer);
    const ports = this.ports.splice(0);
    for (const p of ports) for (const c of p.clients) c.cut('stopped');
    await Promise.all(
      ports.map((p) => new Promise<void>((resolve) => (p.server ? p.server.close(() => resolve()) : resolve()))),
    );
  }

  status(): ProxyStatus {
    return {
      ports: this.ports.map((p) => ({
        port: p.entry.port,
        host: p.entry.host,
        target: p.entry.target,
        writes: p.entry.writes,
        clients: [...p.clients].map((c) => ({
          address: c.address,
          since: new Date(c.since).toISOString(),
          requests: c.requests,
        })),
        answers: { ...p.answers },
        ended: { ...p.ended },
      })),
    };
  }

  /** Cuts off each client that has more than maxUnreadBytes of its answers not taken, the kernel's send queue counted. */
  private async checkUnread(): Promise<void> {
    if (this.checkingUnread) return;
    const suspects = this.ports.flatMap((p) => [...p.clients].filter((c) => c.mayHoldUnread));

    if (suspects.length === 0) return;
    this.checkingUnread = true;
    try {
      const queues = await sendQueues();
      if (!queues) return;
      for (const c of suspects) {
        const queued = c.connection ? queues.get(c.connection) : undefined;
        if (queued !== undefined) c.unreadInKernel(queued);
      }
    } finally {
      this.checkingUnread = false;
    }
  }

  private listen(p: ProxyPort): Promise<void> {
    const server = net.createServer({ noDelay: true }, (socket) => this.accept(p, socket));
    server.on('error', (err) => this.d.log.error({ err, port: p.entry.port }, 'modbus proxy port failed'));
    p.server = server;
    return new Promise((resolve, reject) => {
      const fail = (err: Error) =>
        reject(new Error(`modbusProxy port ${p.entry.port} on ${p.entry.host} cannot listen: ${err.message}`));
      server.once('error', fail);
      server.listen({ port: p.entry.port, host: p.entry.host }, () => {
        server.off('error', fail);
        this.d.log.info(
          { port: p.entry.port, host: p.entry.host, target: p.entry.target, writes: p.entry.writes },
          'modbus proxy listening',
        );
        resolve();
      });
    });
  }

  private accept(p: ProxyPort, socket: net.Socket): void {
    const port = String(p.entry.port);
    const addr = socket.remoteAddress ?? 'unknown';
    const client = p.clientLabel(addr);
    // the API port's admission (src/api/http/connections.ts): an address past its share, or a
    // full port, makes room with an idle client (no request waiting) of the address holding the
    // most, the newcomer's counted with it; only when none is idle is the newcomer refused
    const own = [...p.clients].filter((c) => c.address === addr);
    const { maxClients, maxClientsPerAddress } = this.limits;
    if (own.length >= maxClientsPerAddress && !this.giveWay(p, own, addr)) {
      this.refuse(p, socket, client, `${addr} has its ${maxClientsPerAddress} clients (its share of the port)`);
      return;
    }
    if (p.clients.size >= maxClients && !this.giveWay(p, [...p.clients], addr)) {
      this.refuse(p, socket, client, `the port has its ${maxClients} clients, none of them idle`);
      return;
    }
    const lane = p.bus.guest(this.limits.maxPending);
    let nextAt = 0;
    const c: ProxyClient = new ProxyClient(socket, this.limits, {
      serve: async (frame, req) => {
        const now = performance.now();
        const at = Math.max(now, nextAt);
        nextAt = at + this.limits.minGapMs;
        if (at > now) await sleep(at - now);
        return this.serve(p, lane, frame, req, client);
      },
      counted: (outcome) => {
        p.answers[outcome]++;
        this.requests?.inc({ device: p.entry.target, port, client, outcome });
      },
      ended: (reason, detail) => {
        lane.close();
        p.clients.delete(c);
        this.ended(p, client, reason, detail);
      },
    });
    p.clients.add(c);
  }

  /** refused before a byte is read: a connection flood never reaches the bus */
  private refuse(p: ProxyPort, socket: net.Socket, client: string, detail: string): void {
    socket.on('error', () => undefined);
    socket.destroy();
    this.ended(p, client, 'full', detail);
  }

  /** Cuts the idle client of `among` from the address holding the most (newcomer counted), idle longest; false when none is idle. */
  private giveWay(p: ProxyPort, among: ProxyClient[], newcomer: string): boolean {
    const held = new Map<string, number>();
    for (const c of p.clients) held.set(c.address, (held.get(c.address) ?? 0) + 1);
    let best: ProxyClient | null = null;
    let rank: [number, number] = [-1, 0];
    for (const c of among) {
      if (!c.idle) continue;
      const r: [number, number] = [(held.get(c.address) ?? 0) + (c.address === newcomer ? 1 : 0), -c.lastActive];
      if (r[0] > rank[0] || (r[0] === rank[0] && r[1] > rank[1])) {
        best = c;
        rank = r;
      }
    }
    best?.cut('gave-way', `an idle client of ${best.address} gives way to a newcomer`);
    return best !== null;
  }

  private ended(p: ProxyPort, client: string, reason: CutOff | 'full', detail?: string): void {
    p.ended[reason]++;
    this.ends?.inc({ device: p.entry.target, port: String(p.entry.port), client, reason });
    if (reason === 'closed' || reason === 'stopped') return;
    const may = p.mayLog(reason);
    if (may.ok)
      this.d.log.warn(
        { port: p.entry.port, client, reason, detail, alsoSince: may.left },
        'modbus proxy cut a client off',
      );
  }

  private async serve(
    p: ProxyPort,
    lane: GuestLane,
    frame: Frame,
    req: Exclude<ProxyRequest, { kind: 'refuse' }>,
    client: string,
  ): Promise<Answer> {
    const { unitId, timeoutMs } = p.device.connection;
    // 0 and 255 are what Modbus TCP clients send when a device behind TCP needs no unit (Implementation Guide §4.4.2)
    if (frame.unitId !== unitId && frame.unitId !== 0 && frame.unitId !== 255)
      return {
        bytes: exceptionAnswer(frame, req.fn, EXCEPTION.GATEWAY_PATH_UNAVAILABLE),
        outcome: 'refused',
      };
    try {
      if (req.kind === 'read') {
        const fn = req.fn === 3 ? 'holding' : 'input';
        const maxAgeMs = this.d.site.pollPeriodMs(p.device.id) / this.d.clock.speed;
        const r = await p.bus.guestRead(lane, fn, unitId, req.address, req.quantity, timeoutMs, maxAgeMs);
        return { bytes: readAnswer(frame, req.fn, r.registers), outcome: r.cached ? 'cached' : 'forwarded' };
      }
      const why = await this.writeRefusal(p, req.address, req.values.length);
      if (why) {
        const may = p.mayLog('write');
        if (may.ok)
          this.d.log.warn(
            { port: p.entry.port, client, address: req.address, count: req.values.length, alsoSince: may.left },
            `modbus proxy refused a write: ${why}`,
          );
        return { bytes: exceptionAnswer(frame, req.fn, EXCEPTION.ILLEGAL_FUNCTION), outcome: 'write_denied' };
      }
      await p.bus.guestWrite(lane, unitId, req.address, req.values, timeoutMs);
      return { bytes: writeAnswer(frame, req), outcome: 'forwarded' };
    } catch (err) {
      if (err instanceof GuestQueueFull) throw err;
      if (err instanceof ModbusError && err.kind === 'exception' && err.exceptionCode !== undefined)
        return { bytes: exceptionAnswer(frame, req.fn, err.exceptionCode), outcome: 'exception' };
      return { bytes: exceptionAnswer(frame, req.fn, EXCEPTION.GATEWAY_TARGET_FAILED), outcome: 'failed' };
    }
  }

  /** why a write to [address, address + count) is refused, or null when it may go to the device */
  private async writeRefusal(p: ProxyPort, address: number, count: number): Promise<string | null> {
    if (p.entry.writes === 'deny') return 'writes: deny (the default) for this port';
    const managed = this.d.managed();
    if (managed.length === 0) return null;
    p.protectedRegisters ??= controlRegistersAt(
      p.device,
      managed,
      this.d.profiles,
      p.bus.reader(p.device.connection.timeoutMs),
    );
    const ranges = await p.protectedRegisters;
    if (ranges === null) {
      // model 124 could not be found this time: every register stays protected, and it is looked for again
      p.protectedRegisters = null;
      return 'battery control is on and its registers on this device could not be found';
    }
    // the register written that control holds, not the start of control's range (model 124's header)
    const hit = firstProtected(ranges, address, count);
    return hit !== undefined ? `register ${hit} is written by battery control, which is on` : null;
  }

  private metrics(): void {
    const registers = this.d.registry ? [this.d.registry] : [];
    this.requests = new Counter({
      name: 'sitegw_modbus_proxy_requests_total',
      help: "Requests of Modbus proxy clients by outcome: forwarded (to the device), cached (answered from sitegw's own read in this poll period), refused (not carried or another unit), write_denied, exception (the device's), failed (no answer)",
      labelNames: ['device', 'port', 'client', 'outcome'],
      registers,
    });
    this.ends = new Counter({
      name: 'sitegw_modbus_proxy_disconnects_total',
      help: 'Modbus proxy connections ended, by reason: garbage, flood, unread (answers not read), idle, gave-way (idle, cut for a newcomer), closed (by the client), stopped, full (refused: the port or the address had its most clients)',
      labelNames: ['device', 'port', 'client', 'reason'],
      registers,
    });
    const ports = this.ports;
    new Gauge({
      name: 'sitegw_modbus_proxy_clients',
      help: 'Clients connected to a Modbus proxy port now',
      labelNames: ['device', 'port'],
      registers,
      collect() {
        for (const p of ports) this.set({ device: p.entry.target, port: String(p.entry.port) }, p.clients.size);
      },
    });
  }
}
