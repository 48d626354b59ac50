import { connect, type Socket } from 'node:net';
import { rng as prng } from '../fuzz/gen.js';
import { heldByAddress, PROBE, portSockets, slotsOf } from './admission.js';
import { partnerToken, rawRequest } from './auth.js';
import type { ChildDemo } from './child-daemon.js';
import { RSS_BOUND_MIB, rssMib } from './unit-runtime.js';

export const ADDRESSES = Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 2}`);
export const PARTNER = '127.0.0.40';
/** limits.http's defaults, which the demo runs with (docs/security.md "HTTP limits") */
const MAX_CONNECTIONS = 128;
const MAX_PER_ADDRESS = 32;
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

export const FAULTS = [
  'idle',
  'upgrade-good',
  'upgrade-bad',
  'upgrade-none',
  'reset',
  'half-close',
  'slowloris',
  'no-read',
  'pipeline',
  'trickle',
  'burst',
  'upgrade-loop',
] as const;
export type Fault = (typeof FAULTS)[number];

export interface Step {
  atMs: number;
  addr: string;
  fault: Fault;
  /** how long the fault holds its connection, ms */
  holdMs: number;
  /** how it lets go: a FIN, or a reset */
  reset: boolean;
  /** connections it opens at once (burst) or requests it pipelines */
  n: number;
}

/** The schedule of one round: `steps` faults spread over `spanMs`, from the seed alone. */
export function schedule(seed: number, steps: number, spanMs: number): Step[] {
  const r = prng(seed);
  const out: Step[] = [];
  for (let i = 0; i < steps; i++)
    out.push({
      atMs: Math.floor(r() * spanMs),
      addr: ADDRESSES[Math.floor(r() * ADDRESSES.length)]!,
      fault: FAULTS[Math.floor(r() * FAULTS.length)]!,
      holdMs: Math.floor(r() * spanMs),
      reset: r() < 0.5,
      n: 1 + Math.floor(r() * 40),
    });
  return out.sort((a, b) => a.atMs - b.atMs);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RoundReport {
  seed: number;
  faults: Record<Fault, number>;
  checks: number;
  peakRssMib: number;
  violations: string[];
}

/** Runs the faults of one seed against `d`, then checks the invariants; violations are returned, not thrown. */
export class Harness {
  private readonly open = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private token = '';
  peak = 0;

  constructor(
    private readonly d: ChildDemo,
    private readonly port: number,
  ) {}

  async init(): Promise<void> {
    this.token = await partnerToken(this.d.credentials);
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private stopped = false;

  /** a client socket; `halfOpen` ones keep their side open after the daemon's FIN and keep writing, as a hostile tool may */
  private sock(addr: string, halfOpen = false): Socket {
    const s = connect({ port: this.port, host: '127.0.0.1', localAddress: addr, allowHalfOpen: halfOpen });
    if (halfOpen)
      s.once('end', () => {
        const poke = setInterval(() => (s.destroyed ? clearInterval(poke) : s.write('x')), 200);
      });
    this.open.add(s);
    s.on('error', () => undefined);
    s.once('close', () => this.open.delete(s));
    return s;
  }

  private letGo(s: Socket, step: Step): void {
    this.later(step.holdMs, () => (step.reset ? s.resetAndDestroy() : s.end()));
    // whatever the daemon does, the harness lets go of its end within the hold and a second
    this.later(step.holdMs + 1000, () => s.destroy());
  }

  private upgradeRequest(token: string | null): string {
    return (
      `GET /ws?streams=grid-events HTTP/1.1\r\nHost: g\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\n` +
      (token === null ? '' : `Authorization: Bearer ${token}\r\n`) +
      '\r\n'
    );
  }

  private run(step: Step): void {
    if (this.stopped) return;
    const s = this.sock(step.addr, step.reset && step.fault.startsWith('upgrade'));
    s.on('data', () => undefined);
    s.once('connect', () => {
      switch (step.fault) {
        case 'idle':
          break;
        case 'upgrade-good':
          s.write(this.upgradeRequest(this.token));
          break;
        case 'upgrade-bad':
          // refused upgrades race each other only when many come at once (issue 40 finding 1)
          for (let i = 1; i < step.n; i++) {
            const b = this.sock(step.addr, i % 2 === 0);
            b.on('data', () => undefined);
            b.once('connect', () => b.write(this.upgradeRequest(`sgw_at_junk${step.atMs}x${i}`)));
            this.letGo(b, step);
          }
          s.write(this.upgradeRequest(`sgw_at_junk${step.atMs}`));
          break;
        case 'upgrade-none':
          s.write(this.upgradeRequest(null));
          break;
        case 'reset':
          s.write('GET /api/v1/sites HTTP/1.1\r\nHost: g\r\n');
          s.resetAndDestroy();
          return;
        case 'half-close':
          s.end('GET /healthz HTTP/1.1\r\nHost: g\r\n\r\n');
          break;
        case 'slowloris': {
          s.write('GET /api/v1/sites HTTP/1.1\r\nHost: g\r\n');
          const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write('X-a: b\r\n')), 300);
          s.once('close', () => clearInterval(t));
          break;
        }
        case 'no-read':
          s.removeAllListeners('data');
          s.pause();
          s.write('GET /openapi.json HTTP/1.1\r\nHost: g\r\n\r\n'.repeat(step.n));
          break;
        case 'pipeline':
          s.write(
            `GET /api/v1/sites HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${this.token}\r\n\r\n`.repeat(step.n),
          );
          break;
        case 'trickle': {
          s.write(
            `PUT /api/v1/devices/inverter/plan HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${this.token}\r\n` +
              'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
          );
          let sent = 0;
          const pump = () => {
            for (let i = 0; i < 64 && !s.destroyed && sent < 4096; i++, sent++) s.write('1\r\n \r\n');
            if (!s.destroyed && sent < 4096) setImmediate(pump);
          };
          pump();
          break;
        }
        case 'upgrade-loop': {
          // n clients that hang up on the answer to a junk-token upgrade and ask again at once, for the hold
          const until = Date.now() + step.holdMs;
          const again = (k: number) => {
            if (Date.now() > until || this.stopped) return;
            const b = this.sock(step.addr);
            b.once('data', () => (k % 2 === 0 ? b.destroy() : b.resetAndDestroy()));
            b.once('close', () => setImmediate(() => again(k + 1)));
            b.once('connect', () => b.write(this.upgradeRequest(`sgw_at_loop${k}`)));
          };
          for (let i = 0; i < step.n; i++) again(i);
          break;
        }
        case 'burst':
          for (let i = 1; i < step.n; i++) {
            const b = this.sock(step.addr);
            b.on('data', () => undefined);
            b.once('connect', () => b.write('GET /healthz HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n'));
            this.letGo(b, step);
          }
          s.write('GET /healthz HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n');
          break;
      }
      this.letGo(s, step);
    });
  }

  private sample(): void {
    if (this.d.alive()) this.peak = Math.max(this.peak, rssMib(this.d.child.pid!));
  }

  /** A partner on its own address: a token, then its sites; the outcome as text. */
  private async partner(): Promise<string> {
    const { id, secret } = this.d.credentials.client;
    const t = await rawRequest({
      method: 'POST',
      url: this.d.credentials.tokenUrl,
      localAddress: PARTNER,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        connection: 'close',
      },
      body: 'grant_type=client_credentials',
    }).catch((e: Error) => ({ status: 0, body: { error: e.message } }) as { status: number; body: any });
    if (t.status !== 200) return `token ${t.status} ${JSON.stringify(t.body).slice(0, 120)}`;
    const r = await rawRequest({
      url: `${this.d.url}/api/v1/sites`,
      localAddress: PARTNER,
      headers: { authorization: `Bearer ${t.body.access_token}`, connection: 'close' },
    }).catch((e: Error) => ({ status: 0, text: e.message }) as { status: number; text: string });
    return r.status === 200 ? 'ok' : `sites ${r.status} ${r.text.slice(0, 120)}`;
  }

  /** The slots within limits.http's caps (the demo's defaults: 128, 32 per address); a breach in words, or null. */
  private async withinCaps(): Promise<string | null> {
    const slots = await slotsOf(this.d.url, this.token).catch(() => null);
    if (!slots) return null; // a refused probe (SERVER_BUSY) is admission working; the partner check covers service
    const over: string[] = [];
    if (slots.slots > MAX_CONNECTIONS) over.push(`${slots.slots} slots of ${MAX_CONNECTIONS}`);
    if (slots.sockets > slots.slots) over.push(`${slots.sockets} sockets for ${slots.slots} slots`);
    for (const [a, n] of slots.byAddress) if (n > MAX_PER_ADDRESS) over.push(`${a} holds ${n} of ${MAX_PER_ADDRESS}`);
    let sum = 0;
    for (const n of slots.byAddress.values()) sum += n;
    if (slots.byAddress.size < 32 && sum !== slots.slots) over.push(`addresses sum to ${sum}, slots ${slots.slots}`);
    return over.length > 0 ? over.join('; ') : null;
  }

  /**
   * The slot table against the kernel: per fault address, the daemon's count equals the real
   * connections it holds. Connections close and open on their own timers, so both sides are
   * read until they agree, for up to `settleMs`; a difference that outlasts it is a violation.
   */
  private async slotsAgree(settleMs: number): Promise<string | null> {
    const until = Date.now() + settleMs;
    let last = '';
    for (;;) {
      const slots = await slotsOf(this.d.url, this.token);
      const kernel = heldByAddress(this.d.child.pid!, this.port);
      const diff: string[] = [];
      for (const a of ADDRESSES) {
        const counted = slots.byAddress.get(a) ?? 0;
        const real = kernel.get(a) ?? 0;
        if (counted !== real) diff.push(`${a}: ${counted} slots, ${real} connections`);
      }
      // the probe's own connection is both a slot and a socket
      if (slots.slots !== slots.sockets) diff.push(`${slots.slots} slots for ${slots.sockets} open sockets`);
      // descriptors: a socket the daemon keeps after its connection is gone shows here, not in
      // the TCP table; read once the probe's own connection (Connection: close) has ended
      await sleep(200);
      const extra = portSockets(this.d.child.pid!, this.port) - (slots.slots - 1);
      if (extra !== 0) diff.push(`${extra} socket descriptors beyond the slots`);
      if (diff.length === 0) return null;
      last = diff.join('; ');
      if (Date.now() > until) return last;
      await sleep(100);
    }
  }

  /** One seed: its faults for `spanMs`, checks every `checkEveryMs` meanwhile, and the full check at the end. */
  async round(seed: number, steps: number, spanMs: number, checkEveryMs = 1500): Promise<RoundReport> {
    const faults = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<Fault, number>;
    const violations: string[] = [];
    let checks = 0;
    this.peak = 0;
    this.stopped = false;
    const sampler = setInterval(() => this.sample(), 50);
    const start = Date.now();
    for (const step of schedule(seed, steps, spanMs)) {
      faults[step.fault]++;
      this.later(step.atMs, () => this.run(step));
    }
    try {
      // while the faults run: the partner is served and memory stays bounded
      while (Date.now() - start < spanMs) {
        await sleep(checkEveryMs);
        const p = await this.partner();
        checks++;
        if (p !== 'ok') violations.push(`partner during the faults: ${p}`);
        this.sample();
        checks++;
        if (this.peak >= RSS_BOUND_MIB) violations.push(`RSS ${this.peak.toFixed(0)} MiB during the faults`);
        // while the faults run: the slot table within its caps, and no slot's address counted
        // past what the kernel shows it holding by more than the sockets closing meanwhile
        const caps = await this.withinCaps();
        checks++;
        if (caps) violations.push(`during the faults: ${caps}`);
        if (!this.d.alive()) {
          violations.push('the daemon exited');
          return { seed, faults, checks, peakRssMib: this.peak, violations };
        }
      }
      // every fault has let go (its hold and a second at most); the slots must follow
      await sleep(1200);
      this.stopped = true;
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      for (const s of this.open) s.destroy();
      const diff = await this.slotsAgree(5000);
      checks++;
      if (diff) violations.push(`after the faults: ${diff}`);
      const p = await this.partner();
      checks++;
      if (p !== 'ok') violations.push(`partner after the faults: ${p}`);
    } finally {
      clearInterval(sampler);
    }
    return { seed, faults, checks, peakRssMib: this.peak, violations };
  }

  /** Opens `n` connections of each kind that holds one and leaves them open: what SIGTERM must not wait for. */
  holdForStop(n: number): void {
    this.stopped = false;
    for (let i = 0; i < n; i++) {
      const addr = ADDRESSES[i % ADDRESSES.length]!;
      // reset: true makes the refused upgrades half-open ones
      const step: Step = { atMs: 0, addr, fault: 'idle', holdMs: 60_000, reset: true, n: 2 };
      for (const fault of ['idle', 'upgrade-good', 'upgrade-bad', 'no-read', 'slowloris'] as const)
        this.run({ ...step, fault });
    }
  }

  /** Ends everything the harness opened. */
  close(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of this.open) s.destroy();
  }
}

/** SIGTERM, and how long the daemon took to exit (null: still running after `limitMs`). */
export async function stopWithin(d: ChildDemo, limitMs: number): Promise<number | null> {
  const t0 = Date.now();
  d.child.kill('SIGTERM');
  const ended = await Promise.race([d.exit.then(() => true), sleep(limitMs).then(() => false)]);
  return ended ? Date.now() - t0 : null;
}

export { PROBE };
