import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import {
  formatInstant,
  formatInterval,
  parseInclude,
  parseInterval,
  parseResolution,
} from '../../src/telemetry/interval.js';

const ms = (iso: string) => Date.parse(iso);

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('parseInterval', () => {
  it('accepts start/end', () => {
    expect(parseInterval('2026-11-01T00:00:00Z/2026-11-02T00:00:00Z')).toEqual({
      start: ms('2026-11-01T00:00:00Z'),
      end: ms('2026-11-02T00:00:00Z'),
    });
  });

  it('accepts start/duration and duration/end, applying durations in UTC', () => {
    expect(parseInterval('2026-03-29T00:00:00Z/P1D')).toEqual({
      start: ms('2026-03-29T00:00:00Z'),
      end: ms('2026-03-30T00:00:00Z'),
    });
    expect(parseInterval('PT90M/2026-11-01T12:00:00Z')).toEqual({
      start: ms('2026-11-01T10:30:00Z'),
      end: ms('2026-11-01T12:00:00Z'),
    });
  });

  it('converts explicit offsets to UTC', () => {
    expect(parseInterval('2026-11-01T01:00:00+01:00/2026-11-01T19:00:00-05:00')).toEqual({
      start: ms('2026-11-01T00:00:00Z'),
      end: ms('2026-11-02T00:00:00Z'),
    });
    expect(parseInterval('2026-11-01T05:30:00+0530/PT1H').start).toBe(ms('2026-11-01T00:00:00Z'));
  });

  it('refuses a datetime without Z or offset, saying which end and how to fix it', () => {
    for (const text of ['2026-11-01T00:00:00/P1D', '2026-11-01T00:00:00Z/2026-11-02T00:00:00', '2026-11-01/P1D']) {
      const e = errorOf(() => parseInterval(text));
      expect(e.code).toBe('INVALID_INTERVAL');
      expect(e.statusCode).toBe(400);
      expect(e.message).toMatch(/no UTC offset/);
    }
    expect(errorOf(() => parseInterval('2026-11-01T00:00:00/P1D')).message).toContain('start');
    expect(errorOf(() => parseInterval('2026-11-01T00:00:00Z/2026-11-02T00:00:00')).message).toContain('end');
  });

  it('explains a "+" offset that arrived as a space from an unencoded URL', () => {
    const e = errorOf(() => parseInterval('2026-11-01T01:00:00 01:00/P1D'));
    expect(e.code).toBe('INVALID_INTERVAL');
    expect(e.message).toContain('%2B');
  });

  it('refuses garbage with a message naming the parameter and the accepted forms', () => {
    for (const text of [
      '',
      'yesterday',
      '2026-11-01T00:00:00Z',
      'a/b',
      'P1D/PT1H',
      '2026-11-01T00:00:00Z/P1X',
      'x/y/z',
    ]) {
      const e = errorOf(() => parseInterval(text));
      expect(e.code).toBe('INVALID_INTERVAL');
      expect(e.message).toContain('interval');
      expect(e.message).toContain('start/end, start/duration or duration/end');
      expect(e.message).toContain('2026-11-01T00:00:00Z/2026-11-02T00:00:00Z');
    }
  });

  it('refuses an end before or equal to the start', () => {
    for (const text of [
      '2026-11-02T00:00:00Z/2026-11-01T00:00:00Z',
      '2026-11-01T00:00:00Z/2026-11-01T00:00:00Z',
      '2026-11-01T00:00:00Z/PT0S',
    ]) {
      const e = errorOf(() => parseInterval(text));
      expect(e.code).toBe('INVALID_INTERVAL');
      expect(e.message).toMatch(/end must be after the start/);
    }
  });

  it('refuses more than 400 days and accepts exactly 400', () => {
    expect(() => parseInterval('2026-01-01T00:00:00Z/P400D')).not.toThrow();
    const e = errorOf(() => parseInterval('2026-01-01T00:00:00Z/P401D'));
    expect(e.code).toBe('INTERVAL_TOO_LONG');
    expect(e.message).toContain('400 days');
  });

  it('reads a bare duration as ending now only when now is given', () => {
    const now = ms('2026-11-01T12:00:00Z');
    expect(parseInterval('PT6H', now)).toEqual({ start: ms('2026-11-01T06:00:00Z'), end: now });
    expect(errorOf(() => parseInterval('PT6H')).code).toBe('INVALID_INTERVAL');
  });
});

describe('parseResolution', () => {
  const allowed = ['PT15M', 'PT1H', 'P1D'] as const;

  it('defaults when absent and returns allowed values as given', () => {
    expect(parseResolution(undefined, allowed, 'PT15M')).toBe('PT15M');
    expect(parseResolution('', allowed, 'PT15M')).toBe('PT15M');
    expect(parseResolution('P1D', allowed, 'PT15M')).toBe('P1D');
  });

  it('accepts an equal clock duration under the allowed spelling, but not a calendar look-alike', () => {
    expect(parseResolution('PT60M', allowed, 'PT15M')).toBe('PT1H');
    expect(parseResolution('PT900S', allowed, 'PT15M')).toBe('PT15M');
    expect(() => parseResolution('PT24H', allowed, 'PT15M')).toThrow(ApiError);
    expect(() => parseResolution('P30D', [...allowed, 'P1M'], 'PT15M')).toThrow(ApiError);
  });

  it('refuses anything else, naming the allowed values', () => {
    for (const text of ['PT5M', 'P1M', 'hourly', 'pt1h']) {
      const e = errorOf(() => parseResolution(text, allowed, 'PT15M'));
      expect(e.code).toBe('INVALID_RESOLUTION');
      expect(e.message).toContain('PT15M, PT1H, P1D');
    }
    expect(parseResolution('P1M', [...allowed, 'P1M'], 'PT15M')).toBe('P1M');
  });
});

describe('parseInclude', () => {
  it('refuses a present but empty list rather than guessing', () => {
    for (const t of ['', ' ', ',', ' , '])
      expect(() => parseInclude(t), JSON.stringify(t)).toThrow(expect.objectContaining({ code: 'INVALID_INCLUDE' }));
  });

  it('defaults to default and reads comma-separated groups', () => {
    expect([...parseInclude(undefined)]).toEqual(['default']);
    expect([...parseInclude('energy')]).toEqual(['energy']);
    expect([...parseInclude('default, energy')].sort()).toEqual(['default', 'energy']);
  });

  it('refuses an unknown group naming the allowed ones', () => {
    const e = errorOf(() => parseInclude('default,power'));
    expect(e.code).toBe('INVALID_INCLUDE');
    expect(e.message).toContain('"power"');
    expect(e.message).toContain('default, energy');
  });
});

describe('formatInterval', () => {
  it('writes canonical UTC without milliseconds, across day and year ends', () => {
    expect(formatInterval(ms('2026-11-23T00:15:00Z'), ms('2026-11-23T00:30:00Z'))).toBe(
      '2026-11-23T00:15:00Z/2026-11-23T00:30:00Z',
    );
    expect(formatInterval(ms('2026-12-31T23:45:00Z'), ms('2027-01-01T00:00:00Z'))).toBe(
      '2026-12-31T23:45:00Z/2027-01-01T00:00:00Z',
    );
    expect(formatInstant(ms('2026-03-29T01:02:03.456Z'))).toBe('2026-03-29T01:02:03Z');
  });

  it('agrees with Date#toISOString over a long run of buckets', () => {
    const start = ms('2026-01-01T00:00:00Z');
    for (let t = start; t < start + 40 * 86_400_000; t += 7 * 60_000 + 13_000) {
      expect(formatInstant(t)).toBe(new Date(t).toISOString().replace('.000Z', 'Z'));
    }
  });
});

describe('years outside 0000-9999', () => {
  it('an interval reaching past them is refused with the allowed range, whichever way it is written', () => {
    for (const text of [
      '9999-12-31T00:00:00Z/P1D',
      '9999-12-31T00:00:00Z/10000-01-01T00:00:00Z',
      '+010001-01-01T00:00:00Z/P1D',
      '-000001-12-31T00:00:00Z/P1D',
      'P2D/0000-01-01T12:00:00Z',
      '9999-12-31T23:00:00+00:00/PT2H',
    ]) {
      const e = errorOf(() => parseInterval(text));
      expect(e.statusCode, text).toBe(400);
      expect(e.code, text).toBe('INVALID_INTERVAL');
      expect(e.message, text).toContain('0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    }
    // the edges themselves are inside
    expect(parseInterval('9999-12-30T23:59:59Z/9999-12-31T23:59:59Z').end).toBe(ms('9999-12-31T23:59:59Z'));
    expect(parseInterval('0000-01-01T00:00:00Z/P1D').start).toBe(ms('0000-01-01T00:00:00Z'));
  });

  it('an instant beyond them (a period widened past the edge) is written whole in the expanded form, as toISOString does', () => {
    for (const iso of [
      '+010000-01-01T00:00:00Z',
      '+010001-01-01T00:15:00Z',
      '-000001-12-31T23:45:00Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:45:00Z',
    ]) {
      expect(formatInstant(ms(iso))).toBe(iso);
    }
    expect(formatInterval(ms('9999-12-31T23:00:00Z'), ms('+010000-01-01T00:00:00Z'))).toBe(
      '9999-12-31T23:00:00Z/+010000-01-01T00:00:00Z',
    );
  });
});
