/** The telemetry endpoint's cache of serialised answers: kept while the buckets are unchanged, bounded in bytes. */
import { describe, expect, it } from 'vitest';
import { AnswerCache } from '../../src/telemetry/answer-cache.js';

describe('AnswerCache', () => {
  it('answers from the cache while the generation is the same, and reads again when it moved', () => {
    const c = new AnswerCache(1000);
    let reads = 0;
    const make = () => `{"n":${++reads}}`;
    expect(String(c.answer('a', 1, make))).toBe('{"n":1}');
    expect(String(c.answer('a', 1, make))).toBe('{"n":1}');
    expect(String(c.answer('a', 2, make))).toBe('{"n":2}');
    expect(String(c.answer('a', 2, make))).toBe('{"n":2}');
    expect({ hits: c.hits, misses: c.misses, reads }).toEqual({ hits: 2, misses: 2, reads: 2 });
    expect(c.size).toEqual({ entries: 1, bytes: 7 });
  });

  it('keeps at most its bytes, dropping the least recently used first', () => {
    const c = new AnswerCache(100);
    const body = (ch: string) => () => ch.repeat(10);
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']) c.answer(k, 1, body(k));
    expect(c.size).toEqual({ entries: 10, bytes: 100 });
    c.answer('a', 1, body('x')); // a used again: b is now the oldest
    c.answer('k', 1, body('k'));
    expect(c.size).toEqual({ entries: 10, bytes: 100 });
    let made = 0;
    c.answer('a', 1, () => String(++made));
    expect(made).toBe(0);
    c.answer('b', 1, () => String(++made).repeat(10));
    expect(made).toBe(1);
  });

  it('does not keep an answer larger than a tenth of its bound', () => {
    const c = new AnswerCache(100);
    c.answer('small', 1, () => 'x'.repeat(10));
    c.answer('large', 1, () => 'y'.repeat(11));
    expect(c.size).toEqual({ entries: 1, bytes: 10 });
  });

  it('with a first-question maker: keeps nothing but the key on the first question, the answer from the second', () => {
    const c = new AnswerCache(1000);
    const calls: string[] = [];
    const make = () => {
      calls.push('make');
      return 'kept';
    };
    const once = () => {
      calls.push('once');
      return 'made once';
    };
    expect(c.answer('a', 1, make, once)).toBe('made once');
    expect(c.size).toEqual({ entries: 0, bytes: 0 });
    expect(String(c.answer('a', 1, make, once))).toBe('kept');
    expect(String(c.answer('a', 1, make, once))).toBe('kept');
    expect(calls).toEqual(['once', 'make']);
    expect({ hits: c.hits, misses: c.misses }).toEqual({ hits: 1, misses: 2 });
    // a kept answer whose buckets changed is made again and kept, not asked once more
    expect(String(c.answer('a', 2, make, once))).toBe('kept');
    expect(calls).toEqual(['once', 'make', 'make']);
  });

  it('forgets the oldest keys asked once past its bound: one asked again that late is made once again', () => {
    const c = new AnswerCache(1000, 3);
    let once = 0;
    let made = 0;
    const ask = (k: string) =>
      c.answer(
        k,
        1,
        () => `${k}${++made}`,
        () => `${k}${++once}`,
      );
    for (const k of ['a', 'b', 'c', 'd']) ask(k);
    expect(once).toBe(4);
    ask('a'); // forgotten when d came: asked once again
    expect({ once, made }).toEqual({ once: 5, made: 0 });
    ask('d'); // still remembered: kept now
    expect({ once, made }).toEqual({ once: 5, made: 1 });
    expect(c.size.entries).toBe(1);
  });
});
