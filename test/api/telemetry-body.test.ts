import type { Readable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { entriesBody, sendViews, WRITE_BYTES } from '../../src/api/http/telemetry-body.js';

/** pieces as answer-parts.ts gives them, counting how many were taken */
function source(texts: string[]) {
  const taken = { n: 0 };
  function* gen() {
    for (const t of texts) {
      taken.n++;
      yield Buffer.from(t);
    }
  }
  return { pieces: gen(), taken };
}

async function bytesOf(body: Buffer[] | Readable): Promise<string> {
  if (Array.isArray(body)) return Buffer.concat(body).toString('utf8');
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// 40 pieces of 2 to 3 entries, one of them with a non-ASCII state (bytes, not characters, count)
const TEXTS = Array.from({ length: 40 }, (_, i) =>
  i === 7 ? '{"s":"Störung"},{"s":"ü"}' : `{"p":${i}},{"p":${-i}},{"e":${i * 1000}}`,
);
const JSON_ = `{"entries":[${TEXTS.join(',')}]}`;
const BYTES = Buffer.byteLength(JSON_);

describe('entriesBody', () => {
  it('an answer up to the limit is the pieces themselves (no copies), byte for byte the entries in their envelope', async () => {
    const body = entriesBody(source(TEXTS).pieces, BYTES);
    expect(Array.isArray(body)).toBe(true);
    expect(await bytesOf(body)).toBe(JSON_);
    expect(JSON.parse(JSON_).entries.length).toBe(39 * 3 + 2);
    // views of the kept bytes, not copies
    const kept = TEXTS.map((t) => Buffer.from(t));
    const views = entriesBody(kept, BYTES) as Buffer[];
    expect(views[1]).toBe(kept[0]);
    expect(views[3]).toBe(kept[1]);
  });

  it('sendViews answers the views as one body with its length; the onResponse hooks run; HEAD gets no body', async () => {
    const app = Fastify();
    let responded = 0;
    app.addHook('onResponse', (_req, _reply, done) => {
      responded++;
      done();
    });
    app.get('/t', async (_req, reply) => sendViews(reply, entriesBody(source(TEXTS).pieces) as Buffer[]));
    const r = await app.inject({ method: 'GET', url: '/t' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['content-length']).toBe(String(BYTES));
    expect(r.body).toBe(JSON_);
    const h = await app.inject({ method: 'HEAD', url: '/t' });
    expect(h.statusCode).toBe(200);
    expect(h.headers['content-length']).toBe(String(BYTES));
    expect(h.body).toBe('');
    expect(responded).toBe(2);
    await app.close();
  });

  it('no pieces is the empty answer', async () => {
    const body = entriesBody(source([]).pieces);
    expect(Array.isArray(body)).toBe(true);
    expect(await bytesOf(body)).toBe('{"entries":[]}');
  });

  it('one byte over the limit is streamed, the same bytes, the pieces taken only as it is read', async () => {
    const { pieces, taken } = source(TEXTS);
    const body = entriesBody(pieces, BYTES - 1);
    expect(Array.isArray(body)).toBe(false);
    // all but the closing bracket fit: every piece was taken to find that out
    expect(taken.n).toBe(40);
    expect(await bytesOf(body)).toBe(JSON_);
  });

  it('a long answer stops taking pieces at the limit until its client reads', async () => {
    const { pieces, taken } = source(TEXTS);
    const body = entriesBody(pieces, 200);
    expect(Array.isArray(body)).toBe(false);
    expect(taken.n).toBeLessThan(40);
    expect(await bytesOf(body)).toBe(JSON_);
    expect(taken.n).toBe(40);
  });

  it('a long answer never writes more than a page at a time, its head included (an unread connection holds a page, not the head)', async () => {
    // 40 days of ~12 kB: 200 kB are taken to find the answer long, then written 64 kB at a time
    const day = (i: number) => Array.from({ length: 1000 }, (_, k) => `{"p":${i * 1000 + k}}`).join(',');
    const texts = Array.from({ length: 40 }, (_, i) => day(i));
    const body = entriesBody(source(texts).pieces, 200_000);
    expect(Array.isArray(body)).toBe(false);
    const sizes: number[] = [];
    const chunks: Buffer[] = [];
    for await (const c of body) {
      sizes.push((c as Buffer).length);
      chunks.push(c as Buffer);
    }
    expect(Buffer.concat(chunks).toString()).toBe(`{"entries":[${texts.join(',')}]}`);
    const page = WRITE_BYTES + Math.max(...texts.map((t) => Buffer.byteLength(t)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(page);
    expect(sizes.length).toBeGreaterThan(6);
  });
});
