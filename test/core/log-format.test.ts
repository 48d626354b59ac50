/** Log lines: JSON under systemd and into pipes, words on a terminal (docs/install.md "Command line"). */
import { describe, expect, it } from 'vitest';
import { humanLine, logFormat } from '../../src/core/log.js';

describe('log format', () => {
  it('is words on a terminal, JSON under systemd (JOURNAL_STREAM) or into a pipe; SITEGW_LOG_FORMAT wins', () => {
    expect(logFormat({}, { isTTY: true })).toBe('human');
    expect(logFormat({}, { isTTY: false })).toBe('json');
    expect(logFormat({}, {})).toBe('json');
    expect(logFormat({ JOURNAL_STREAM: '8:12345' }, { isTTY: true })).toBe('json');
    expect(logFormat({ SITEGW_LOG_FORMAT: 'json' }, { isTTY: true })).toBe('json');
    expect(logFormat({ SITEGW_LOG_FORMAT: 'human' }, { isTTY: false })).toBe('human');
    expect(logFormat({ SITEGW_LOG_FORMAT: 'fancy' }, { isTTY: false })).toBe('json');
  });

  it('a JSON line in words: time, level, message, fields; an error with its message and stack', () => {
    const t = new Date(2026, 10, 27, 8, 12, 1).getTime();
    expect(
      humanLine(
        `${JSON.stringify({ level: 30, time: t, app: 'sitegw', msg: 'http listening', url: 'http://127.0.0.1:8080', n: 3, what: 'two words' })}\n`,
      ),
    ).toBe('08:12:01 INFO  http listening  url=http://127.0.0.1:8080 n=3 what="two words"\n');
    const err = humanLine(
      JSON.stringify({
        level: 50,
        time: t,
        msg: 'request failed',
        err: { message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:2)' },
      }),
    );
    expect(err).toBe('08:12:01 ERROR request failed (boom)\n    at f (x.ts:1:2)\n');
    expect(humanLine('not json\n')).toBe('not json\n');
  });
});
