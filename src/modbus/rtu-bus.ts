/**
 * Modbus RTU master on one RS-485 line, reached through a serial port or a transparent serial
 * server's TCP socket (ByteLink). Strictly one request on the line at a time (QueuedBus), the
 * line kept silent for the inter-frame delay before every request, and every answer found by
 * rtu-frame.ts among whatever bytes arrived.
 *
 * Why not modbus-serial's connectRTUBuffered/connectTelnet here: their ports keep unread bytes
 * from one request to the next and give every RTU request the same transaction id, so an answer
 * that arrives after its request timed out can be taken for the answer to the next request of
 * the same unit and length: stale registers presented as new. This bus drops every byte received
 * before a request is sent, keeps the line quiet for a settle time after a failed request, and
 * accepts only a frame whose address, function, length and CRC match.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ByteLink } from './byte-link.js';
import { ModbusError } from './errors.js';
import { QueuedBus } from './queued-bus.js';
import { ReconnectBackoff, withTimeout, type ReconnectOptions } from './reconnect.js';
import { encodeReadRequest, parseReadResponse, type ReadRequest } from './rtu-frame.js';
import type { UnitBackoffOptions } from './unit-backoff.js';

export interface RtuBusOptions {
  /** how logs name the line, e.g. rtu:/dev/ttyUSB0 */
  name: string;
  /** a new, unopened link; called again to reopen after the link broke */
  link: () => ByteLink;
  /** per request unless the device gives its own, real ms */
  timeoutMs: number;
  /** silence kept before every request, ms (rtu-timing.ts) */
  interFrameDelayMs: number;
  /**
   * quiet time after a garbled answer, ms, so the rest of it ends before the next request goes
   * out (its bytes are then dropped); after a timeout the wait is half the timeout (at least this,
   * at most 1 s), which catches a unit answering late. Default 20 ms or 10 frame gaps.
   */
  settleMs?: number;
  /**
   * quiet time after a timeout instead of half the timeout: a scan, whose next request goes to
   * another unit id, cannot take a late answer for its own and only needs the line to be free
   */
  settleAfterTimeoutMs?: number;
  backoff?: UnitBackoffOptions;
  reconnect?: ReconnectOptions;
}

interface Pending {
  req: ReadRequest;
  settle: (result: number[] | ModbusError) => void;
}

const RX_CAPACITY = 1024;
/** a request frame leaves a UART in under 100 ms even at 1200 baud; a write pending longer is a dead port */
const WRITE_LIMIT_MS = 1000;

export class RtuBus extends QueuedBus {
  private link: ByteLink | null = null;
  private readonly rx = Buffer.alloc(RX_CAPACITY);
  private rxLength = 0;
  private pending: Pending | null = null;
  /** performance.now() of the last byte seen or sent on the line */
  private lastTraffic = 0;
  private quietUntil = 0;
  private readonly reconnect: ReconnectBackoff;
  private readonly settleMs: number;

  constructor(private readonly rtu: RtuBusOptions) {
    super(rtu.name, { timeoutMs: rtu.timeoutMs, backoff: rtu.backoff });
    this.reconnect = new ReconnectBackoff(rtu.reconnect);
    this.settleMs = rtu.settleMs ?? Math.max(20, 10 * rtu.interFrameDelayMs);
  }

  protected async transact(req: ReadRequest, timeoutMs: number): Promise<number[]> {
    const link = await this.opened(timeoutMs);
    await this.silence(timeoutMs);
    this.rxLength = 0; // whatever came before this request is not its answer
    const frame = encodeReadRequest(req);
    const answer = new Promise<number[] | ModbusError>((resolve) => {
      this.pending = { req, settle: resolve };
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      try {
        // a port whose device vanished may never report the write done: that must not hold the queue
        await withTimeout(link.write(frame), Math.max(timeoutMs, WRITE_LIMIT_MS), `writing to ${link.description}`);
      } catch (err) {
        this.dropLink();
        throw new ModbusError('connection', `cannot write to ${this.name}: ${(err as Error).message}`);
      }
      this.lastTraffic = performance.now();
      if (this.pending) {
        // the timeout counts from the end of the request, so a long frame at a low baud rate is not cut short
        timer = setTimeout(() => this.finish(this.timeoutError(req, timeoutMs)), timeoutMs);
      }
      const result = await answer;
      if (result instanceof ModbusError) throw result;
      return result;
    } catch (err) {
      // an exception or a wrong-length answer ended cleanly; after silence or garbage the line may not have
      const kind = err instanceof ModbusError ? err.kind : 'connection';
      // RTU answers carry no transaction id: a unit answering after its timeout must finish before
      // the next request, or its frame would pass for that request's answer
      if (kind === 'timeout') this.quietUntil = performance.now() + (this.rtu.settleAfterTimeoutMs ?? Math.max(this.settleMs, Math.min(timeoutMs / 2, 1000)));
      else if (kind === 'crc') this.quietUntil = performance.now() + this.settleMs;
      throw err;
    } finally {
      clearTimeout(timer);
      this.pending = null;
    }
  }

  protected async shutdown(): Promise<void> {
    const link = this.link;
    this.link = null;
    await link?.close();
  }

  private timeoutError(req: ReadRequest, timeoutMs: number): ModbusError {
    if (this.rxLength > 0) {
      const shown = this.rx.subarray(0, Math.min(this.rxLength, 16)).toString('hex');
      return new ModbusError('crc', `no valid answer from unit ${req.unitId} in ${timeoutMs} ms, only ${this.rxLength} garbled or short bytes (${shown}${this.rxLength > 16 ? '…' : ''})`);
    }
    return new ModbusError('timeout', `no answer from unit ${req.unitId} in ${timeoutMs} ms`);
  }

  private finish(result: number[] | ModbusError): void {
    const p = this.pending;
    this.pending = null;
    p?.settle(result);
  }

  private onData(data: Buffer): void {
    this.lastTraffic = performance.now();
    let chunk = data;
    const drop = this.rxLength + chunk.length - RX_CAPACITY;
    if (drop > 0) {
      // a babbling line: keep the newest bytes, an answer is at the end
      if (drop >= this.rxLength) {
        chunk = chunk.subarray(drop - this.rxLength);
        this.rxLength = 0;
      } else {
        this.rx.copy(this.rx, 0, drop, this.rxLength);
        this.rxLength -= drop;
      }
    }
    chunk.copy(this.rx, this.rxLength);
    this.rxLength += chunk.length;
    const p = this.pending;
    if (!p) return;
    const parsed = parseReadResponse(this.rx, this.rxLength, p.req);
    if (parsed.status === 'ok') this.finish(parsed.registers);
    else if (parsed.status === 'error') this.finish(parsed.error);
  }

  /** Wait for the inter-frame silence (and any settle time), measured from the last byte either way. */
  private async silence(limitMs: number): Promise<void> {
    const giveUpAt = performance.now() + limitMs;
    for (;;) {
      const now = performance.now();
      const wait = Math.max(this.lastTraffic + this.rtu.interFrameDelayMs, this.quietUntil) - now;
      // a line that never goes quiet (another master, a faulty device) still gets our request; its answers will say the rest
      if (wait <= 0 || now >= giveUpAt) return;
      await sleep(Math.min(wait, giveUpAt - now));
    }
  }

  private async opened(timeoutMs: number): Promise<ByteLink> {
    if (this.link) return this.link;
    const wait = this.reconnect.check(this.name);
    if (wait) throw wait;
    const link = this.rtu.link();
    link.onData = (chunk) => this.onData(chunk);
    link.onClose = (reason) => {
      if (this.link !== link) return;
      this.link = null;
      this.finish(new ModbusError('connection', `${this.name}: ${reason}`));
    };
    try {
      await withTimeout(link.open(timeoutMs), timeoutMs, `opening ${link.description}`);
    } catch (err) {
      void link.close().catch(() => undefined);
      this.reconnect.failed();
      throw new ModbusError('connection', `cannot open ${link.description}: ${explainOpenError(err)}`);
    }
    this.reconnect.succeeded();
    this.link = link;
    this.rxLength = 0;
    return link;
  }

  private dropLink(): void {
    const link = this.link;
    this.link = null;
    void link?.close().catch(() => undefined);
  }
}

/** The usual reasons a serial port does not open, in the words of the fix. */
function explainOpenError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/ENOENT|no such file/i.test(message)) return `${message} (is the adapter plugged in? ls /dev/serial/by-id/ lists them)`;
  if (/EACCES|permission denied/i.test(message)) return `${message} (the user running sitegw needs the dialout group)`;
  if (/EBUSY|cannot lock|resource temporarily unavailable/i.test(message)) return `${message} (another program holds the port)`;
  return message;
}
