/**
 * Modbus RTU master on one RS-485 line, reached through a serial port or a transparent serial
 * server's TCP socket (ByteLink). Strictly one request on the line at a time (QueuedBus), the
 * line kept silent for the inter-frame delay before every request, and every answer found by
 * rtu-frame.ts among whatever bytes arrived.
 *
 * Why not modbus-serial's connectRTUBuffered/connectTelnet here: their ports keep unread bytes
 * from one request to the next and give every RTU request the same transaction id, so an answer
 * that arrives after its request timed out can be taken for the answer to the next request of
 * the same unit and length: stale registers presented as new.
 *
 * RTU answers carry no transaction id, so this bus keeps a late answer away from the next request
 * by time, as MODBUS over Serial Line V1.02 §2.5.1.1 frames messages: a frame ends with a silent
 * interval of at least 3.5 character times (rtu-timing.ts), and bytes are only a new frame after
 * such a silence. After a timeout or an answer that does not fit (`protocol`) the line is dirty:
 * the next request waits until the line has been silent for a whole quiet period (by default the
 * failed request's timeout; every byte received starts it again, bounded so a babbling line still
 * gets its request), which drops an answer up to one timeout late. libmodbus's protocol error
 * recovery does the like (modbus_set_error_recovery(3): "a sleep and flush sequence"). Right
 * before each request the port's input is flushed and every byte received so far dropped, and
 * only a frame whose unit, function, byte count and CRC fit the request is taken as its answer
 * (rtu-frame.ts). What no master can tell apart is an answer later than the quiet period to a
 * request of the same shape.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ByteLink } from './byte-link.js';
import { ModbusError } from './errors.js';
import { type BusRequest, QueuedBus } from './queued-bus.js';
import { ReconnectBackoff, type ReconnectOptions, withTimeout } from './reconnect.js';
import { encodeReadRequest, type ParseResult, parseReadResponse, strayFrame } from './rtu-frame.js';
import { encodeWriteRequest, parseWriteResponse } from './rtu-write-frame.js';
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
   * silence kept after a whole answer with a bad CRC, ms, so any rest of it ends before the next
   * request goes out; default 20 ms or 10 frame gaps (a USB adapter delivers bytes up to 16 ms late)
   */
  settleMs?: number;
  /**
   * silence kept after a timeout or a `protocol` error instead of the failed request's timeout: a
   * scan, whose next request goes to another unit id, cannot take a late answer for its own and
   * only needs the line to be free
   */
  settleAfterTimeoutMs?: number;
  backoff?: UnitBackoffOptions;
  reconnect?: ReconnectOptions;
}

interface Pending {
  req: BusRequest;
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
  /** silence the line needs before the next request, beyond the frame gap: non-zero while it is dirty */
  private quietMs = 0;
  /** performance.now() of the failure that left the line dirty */
  private dirtySince = 0;
  private readonly reconnect: ReconnectBackoff;
  private readonly settleMs: number;

  constructor(private readonly rtu: RtuBusOptions) {
    super(rtu.name, { timeoutMs: rtu.timeoutMs, backoff: rtu.backoff });
    this.reconnect = new ReconnectBackoff(rtu.reconnect);
    this.settleMs = rtu.settleMs ?? Math.max(20, 10 * rtu.interFrameDelayMs);
  }

  protected async transact(req: BusRequest, timeoutMs: number): Promise<number[]> {
    const link = await this.opened(timeoutMs);
    await this.silence(timeoutMs + this.quietMs);
    this.quietMs = 0;
    // whatever came before this request is not its answer: bytes still in the driver, and those received
    await withTimeout(link.discardInput(), WRITE_LIMIT_MS, `flushing ${link.description}`).catch(() => undefined);
    this.rxLength = 0;
    const frame = req.fn === 'write' ? encodeWriteRequest(req) : encodeReadRequest(req);
    const answer = new Promise<number[] | ModbusError>((resolve) => {
      this.pending = { req, settle: resolve };
    });
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
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
        timer = setTimeout(() => {
          expired = true;
          this.finish(this.timeoutError(req, timeoutMs));
        }, timeoutMs);
      }
      const result = await answer;
      if (result instanceof ModbusError) throw result;
      return result;
    } catch (err) {
      // an exception ended cleanly. After the deadline the unit may still answer, and after a
      // frame that does not fit, this request's own answer may still come: either would pass for
      // the answer to a next request of the same shape (no transaction id), so the line is dirty
      const kind = err instanceof ModbusError ? err.kind : 'connection';
      if (expired || kind === 'protocol') this.dirty(this.rtu.settleAfterTimeoutMs ?? timeoutMs);
      else if (kind === 'crc') this.dirty(this.settleMs);
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

  private dirty(quietMs: number): void {
    this.quietMs = quietMs;
    this.dirtySince = performance.now();
  }

  private timeoutError(req: BusRequest, timeoutMs: number): ModbusError {
    const stray = strayFrame(this.rx, this.rxLength, req.unitId);
    if (stray) {
      return new ModbusError(
        'protocol',
        `no answer from unit ${req.unitId} in ${timeoutMs} ms, but a frame from unit ${stray.unitId} (function ${stray.fn}): an answer after its timeout, or a second master on the line`,
      );
    }
    if (this.rxLength > 0) {
      const shown = this.rx.subarray(0, Math.min(this.rxLength, 16)).toString('hex');
      return new ModbusError(
        'crc',
        `no valid answer from unit ${req.unitId} in ${timeoutMs} ms, only ${this.rxLength} garbled or short bytes (${shown}${this.rxLength > 16 ? '…' : ''})`,
      );
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
    const parsed: ParseResult =
      p.req.fn === 'write'
        ? parseWriteResponse(this.rx, this.rxLength, p.req)
        : parseReadResponse(this.rx, this.rxLength, p.req);
    if (parsed.status === 'ok') this.finish(parsed.registers);
    else if (parsed.status === 'error') this.finish(parsed.error);
  }

  /**
   * Wait until the line has been silent for the frame gap, or on a dirty line for the quiet
   * period: measured from the last byte either way, so every byte received starts it again.
   */
  private async silence(limitMs: number): Promise<void> {
    const giveUpAt = performance.now() + limitMs;
    for (;;) {
      const now = performance.now();
      const wait =
        Math.max(this.lastTraffic, this.dirtySince) + Math.max(this.rtu.interFrameDelayMs, this.quietMs) - now;
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
  if (/ENOENT|no such file/i.test(message))
    return `${message} (is the adapter plugged in? ls /dev/serial/by-id/ lists them)`;
  if (/EACCES|permission denied/i.test(message)) return `${message} (the user running sitegw needs the dialout group)`;
  if (/EBUSY|cannot lock|resource temporarily unavailable/i.test(message))
    return `${message} (another program holds the port)`;
  return message;
}
