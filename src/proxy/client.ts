/**
 * One client of a proxy port: its bytes split into Modbus TCP requests (frames.ts), each answered
 * in order, locally when it can be (a refusal, a read the gateway just made) and otherwise in the
 * client's turn on the device's bus. A client is cut off, without a byte of its reaching the bus,
 * when it sends what is not Modbus TCP, keeps more requests waiting than its queue holds, leaves
 * its answers unread, or stays silent too long.
 */
import type net from 'node:net';
import {
  EXCEPTION,
  exceptionAnswer,
  type Frame,
  type ProxyGarbage,
  type ProxyRequest,
  parseRequest,
  splitFrames,
} from './frames.js';
import { endpointKey } from './send-queue.js';

/** how a client's connection ended, as /metrics counts it */
export type CutOff = 'garbage' | 'flood' | 'unread' | 'idle' | 'gave-way' | 'closed' | 'stopped';

export type Outcome = 'forwarded' | 'cached' | 'refused' | 'write_denied' | 'exception' | 'failed';

/** What answers a request: bytes to send, and how it went. */
export interface Answer {
  bytes: Buffer;
  outcome: Outcome;
}

export interface ClientLimits {
  /** requests waiting for their answer, the one on the wire included */
  maxPending: number;
  /**
   * answer bytes the client has not read, in the process or the kernel's send queue of its
   * connection (send-queue.ts), before it is cut off
   */
  maxUnreadBytes: number;
  idleMs: number;
}

export interface ClientHooks {
  /** answers one request that was not refused by its shape */
  serve(frame: Frame, req: Exclude<ProxyRequest, { kind: 'refuse' }>): Promise<Answer>;
  counted(outcome: Outcome): void;
  ended(reason: CutOff, detail?: string): void;
}

export class ProxyClient {
  readonly since = Date.now();
  requests = 0;
  /** when it last sent a request or was last written an answer, ms */
  lastActive = Date.now();
  private buffered: Buffer = Buffer.alloc(0);
  /** answers in request order; the first is written as soon as it is ready */
  private readonly pending: Promise<Answer>[] = [];
  private writing = false;
  private ended = false;
  /** bytes written that the client's side is known to have acknowledged: a lower bound */
  private acked = 0;
  /** `local>remote` as /proc/net/tcp names the connection (send-queue.ts) */
  readonly connection: string | null;

  constructor(
    readonly socket: net.Socket,
    private readonly limits: ClientLimits,
    private readonly hooks: ClientHooks,
  ) {
    socket.setNoDelay(true);
    const local = endpointKey(socket.localAddress ?? '', socket.localPort ?? 0);
    const remote = endpointKey(socket.remoteAddress ?? '', socket.remotePort ?? 0);
    this.connection = local && remote ? `${local}>${remote}` : null;
    socket.setTimeout(limits.idleMs, () => this.cut('idle', `no request for ${limits.idleMs / 1000} s`));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.cut('closed'));
  }

  /** no request waiting for its answer: it may give way to a newcomer (proxy.ts) */
  get idle(): boolean {
    return this.pending.length === 0 && !this.writing;
  }

  get address(): string {
    return this.socket.remoteAddress ?? 'unknown';
  }

  /** more answer bytes than the limit may be waiting unread: worth asking the kernel (unreadInKernel) */
  get mayHoldUnread(): boolean {
    return !this.ended && this.socket.bytesWritten - this.acked > this.limits.maxUnreadBytes;
  }

  /**
   * The kernel's unacknowledged bytes of this connection (send-queue.ts): with what waits in the
   * process, the answers the client has not taken; past the limit it is cut off. Answers of a
   * client that stopped reading wait in the kernel first (a few MiB on Linux) and only then in
   * the process, so `writableLength` alone would let it hold its slot for minutes.
   */
  unreadInKernel(queued: number): void {
    const unread = queued + this.socket.writableLength;
    this.acked = this.socket.bytesWritten - unread;
    if (unread > this.limits.maxUnreadBytes) this.cut('unread', `${unread} answer bytes not read`);
  }

  cut(reason: CutOff, detail?: string): void {
    if (this.ended) return;
    this.ended = true;
    // a reset drops what the kernel still holds for a client that does not read (up to a few
    // MiB); a close would keep it, and the connection, until the client reads or TCP gives up
    if (reason === 'unread' && !this.socket.destroyed) this.socket.resetAndDestroy();
    else this.socket.destroy();
    this.hooks.ended(reason, detail);
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    this.lastActive = Date.now();
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let frames: Frame[];
    try {
      const split = splitFrames(this.buffered);
      frames = split.frames;
      this.buffered = this.buffered.subarray(split.used);
    } catch (err) {
      this.cut('garbage', (err as ProxyGarbage).message);
      return;
    }
    for (const f of frames) {
      if (this.pending.length >= this.limits.maxPending) {
        this.cut('flood', `more than ${this.limits.maxPending} requests waiting for their answers`);
        return;
      }
      this.requests++;
      const req = parseRequest(f.pdu);
      this.pending.push(
        req.kind === 'refuse'
          ? Promise.resolve({ bytes: exceptionAnswer(f, req.fn, req.exception), outcome: 'refused' })
          : this.hooks.serve(f, req).catch(() => ({
              bytes: exceptionAnswer(f, req.fn, EXCEPTION.GATEWAY_TARGET_FAILED),
              outcome: 'failed',
            })),
      );
    }
    void this.flush();
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.pending.length > 0 && !this.ended) {
        const answer = await this.pending[0]!;
        this.pending.shift();
        if (this.ended) return;
        this.hooks.counted(answer.outcome);
        this.socket.write(answer.bytes);
        if (this.socket.writableLength > this.limits.maxUnreadBytes) {
          this.cut('unread', `${this.socket.writableLength} answer bytes not read`);
          return;
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
