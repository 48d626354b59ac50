import type { Writable } from 'node:stream';
import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * Lines queued for a reader that fell behind (journald busy or stuck) beyond this are dropped: a
 * stuck log channel must cost the gateway log lines, never its memory.
 */
export const MAX_QUEUED_LOG_BYTES = 1024 * 1024;

/** How long the exit waits for queued lines to reach a slow reader before they are given up. */
const DRAIN_AT_EXIT_MS = 2_000;

const watched = new WeakSet<Writable>();

/**
 * The log's channel (stdout: journald under systemd), on a policy that never blocks the event
 * loop or the exit: each line goes to node's own stream, which writes what the pipe takes at once
 * and queues the rest for the event loop; past the queue's bound lines are dropped and counted,
 * and once the channel is gone (EPIPE) they are lost.
 *
 * Not pino's default (sonic-boom): its flushSync, which pino runs after every fatal() and at exit,
 * retries a failed write after a blocking 100 ms sleep for as long as it fails, whatever the error.
 * A write waiting on a full pipe when the pipe broke made that EPIPE a loop for ever: the daemon
 * hung with its main thread asleep in Atomics.wait (docs/security.md, "the log channel").
 */
export function logDestination(out: Writable = process.stdout): DestinationStream {
  let dropped = 0;
  // the channel itself failed (journald gone): there is nowhere left to say so. Once per stream:
  // every logger of the process shares stdout
  if (!watched.has(out)) {
    watched.add(out);
    out.on('error', () => undefined);
  }
  return {
    write(line: string) {
      if (out.destroyed || !out.writable) return;
      if (out.writableLength > MAX_QUEUED_LOG_BYTES) {
        dropped++;
        return;
      }
      if (dropped > 0) {
        const note = {
          level: 40,
          time: Date.now(),
          app: 'sitegw',
          dropped,
          msg: 'log lines dropped: the log reader fell behind',
        };
        out.write(`${JSON.stringify(note)}\n`);
        dropped = 0;
      }
      out.write(line);
    },
  };
}

/**
 * Resolves once the lines queued on `out` are written, or after `ms` (a reader that stopped must
 * not hold the exit), or at once when the channel is gone.
 */
export function logDrained(out: Writable = process.stdout, ms = DRAIN_AT_EXIT_MS): Promise<void> {
  if (out.destroyed || out.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    out.once('drain', done);
    out.once('close', done);
  });
}

/** How log lines look: JSON for journald and for a pipe (machines read them), words on a terminal. */
export type LogFormat = 'json' | 'human';

/**
 * SITEGW_LOG_FORMAT (json or human) when set; else human on a terminal, JSON otherwise. Under
 * systemd stdout is journald's stream (JOURNAL_STREAM names it), never a terminal, so the unit's
 * log stays JSON whatever the environment.
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, out: { isTTY?: boolean } = process.stdout): LogFormat {
  const f = env.SITEGW_LOG_FORMAT;
  if (f === 'json' || f === 'human') return f;
  return out.isTTY === true && !env.JOURNAL_STREAM ? 'human' : 'json';
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** fields every line has, shown in their own way or not at all */
const OWN = new Set(['level', 'time', 'msg', 'app', 'pid', 'hostname', 'err']);

const shownValue = (v: unknown): string =>
  typeof v === 'string' ? (/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)) : JSON.stringify(v);

/**
 * One JSON log line in words: `08:12:01 INFO  http listening url=http://…`; an error's message
 * after the line and its stack indented below. A line that is not JSON passes unchanged.
 */
export function humanLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof o !== 'object' || o === null) return line;
  // local time: a person at the terminal reads the clock on the wall
  const time = typeof o.time === 'number' ? new Date(o.time).toTimeString().slice(0, 8) : '--:--:--';
  const level = (LEVELS[Number(o.level)] ?? String(o.level)).padEnd(5);
  const fields = Object.entries(o)
    .filter(([k, v]) => !OWN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${shownValue(v)}`);
  const err = o.err as { message?: unknown; stack?: unknown } | undefined;
  const errText = err && typeof err === 'object' ? ` (${String(err.message ?? '')})` : '';
  const stack =
    err && typeof err.stack === 'string'
      ? `\n${err.stack
          .split('\n')
          .slice(1)
          .map((l) => `    ${l.trim()}`)
          .join('\n')}`
      : '';
  return `${time} ${level} ${String(o.msg ?? '')}${errText}${fields.length ? `  ${fields.join(' ')}` : ''}${stack}\n`;
}

/** One line per event on stdout (journald keeps it), JSON or in words (logFormat); level from SITEGW_LOG_LEVEL. */
export function createLogger(level = process.env.SITEGW_LOG_LEVEL ?? 'info', format = logFormat()): Logger {
  const out = logDestination();
  return pino(
    {
      level,
      base: { app: 'sitegw' },
      // tokens and secrets must never reach a log line (auth issue); redact the usual carriers now
      redact: ['req.headers.authorization', 'headers.authorization', '*.password', '*.secret', '*.client_secret'],
    },
    format === 'human' ? { write: (line: string) => out.write(humanLine(line)) } : out,
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
