import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ErrorCodes, errorBody } from '../../core/errors.js';
import { framedAnswer } from '../../telemetry/answer-parts.js';

/**
 * Answers up to this many bytes are sent whole: a month of PT15M with the energy counters is
 * ~640 kB. Streamed, or joined into one new Buffer, such an answer cost the server about five
 * times a bare route's CPU per request (bench/README.md "Where use grows"): the pages' writes,
 * chunked frames and drains, interpreted under the unit's --lite-mode, or the garbage collections
 * that 640 kB of new external memory a request brings on. Whole, the kept days' bytes are written
 * as they are (views, not copies) in one vectored write. What a client that does not read can
 * hold this way is bounded by limits.http.maxUnsentMiB (src/api/http/request-gate.ts), and is
 * mostly the kept days themselves. Longer answers (up to ~9 MB for 400 days of PT15M) are still
 * streamed a page at a time (docs/security.md).
 */
export const WHOLE_BYTES = 1024 * 1024;

/** Bytes a streamed answer gathers before it writes: a year of P1D is 365 small pieces. */
export const WRITE_BYTES = 64 * 1024;

/**
 * `{"entries":[...]}` from the answer's JSON pieces (each entries joined by commas, never empty;
 * src/telemetry/answer-parts.ts): the pieces themselves with the brackets and commas between
 * them, when the answer has at most `wholeBytes`; else a stream that writes it a few tens of kB
 * at a time, taking the pieces only as its client reads.
 */
export function entriesBody(pieces: Iterable<Buffer>, wholeBytes = WHOLE_BYTES): Buffer[] | Readable {
  const it = framedAnswer(pieces);
  const head: Buffer[] = [];
  let bytes = 0;
  for (let r = it.next(); !r.done; r = it.next()) {
    head.push(r.value);
    bytes += r.value.length;
    if (bytes > wholeBytes) return Readable.from(paged(head, it), { objectMode: true, highWaterMark: 1 });
  }
  return head;
}

/**
 * A 200 of JSON whose bytes are `views`, written in one go without joining them: fastify's send
 * takes one Buffer or a stream, so the reply is taken over. What that skips was checked
 * (test/e2e/telemetry-whole.test.ts): the app registers no onSend hook (no CORS, compression or
 * security headers on this route), and the headers are the ones fastify's send would write,
 * the reply's own first; the onResponse hooks (request log, refusal log) still run, on the
 * response's finish; the request gate (request-gate.ts) counts the unsent bytes the same way,
 * through the response and its socket. A HEAD request gets the headers alone (node writes no
 * body for it). A fault once the reply is taken over is answered here, never left open: a 500
 * while no header was written, else the connection is cut.
 */
export function sendViews(reply: FastifyReply, views: readonly Buffer[]): FastifyReply {
  let bytes = 0;
  for (const v of views) bytes += v.length;
  reply.hijack();
  const res = reply.raw;
  try {
    res.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'application/json; charset=utf-8',
      'content-length': bytes,
    });
    // corked, the views leave in one writev
    res.cork();
    try {
      for (const v of views) res.write(v);
      res.end();
    } finally {
      res.uncork();
    }
  } catch (err) {
    failTaken(reply, err);
  }
  return reply;
}

/** A fault after the reply was taken over: fastify's error handler no longer answers it. */
function failTaken(reply: FastifyReply, err: unknown): void {
  const res = reply.raw;
  reply.log.error({ err, method: reply.request.method, path: reply.request.url.split('?')[0] }, 'request failed');
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  try {
    const json = JSON.stringify(
      errorBody(500, ErrorCodes.INTERNAL.code, 'internal error; the gateway log has the details'),
    );
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.writeHead(500, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    });
    res.end(json);
  } catch {
    res.destroy();
  }
}

/**
 * A long answer a page at a time, `head` (its framed bytes taken so far) first. The head is paged
 * like the rest, not joined: joined it was a fresh ~1 MB copy held by every connection that did
 * not read (32 of them: 20-29 MiB more at the peak, docs/security.md), where its pieces are
 * mostly the kept days' own bytes. Each head piece is let go once it is taken.
 */
function* paged(head: Buffer[], rest: Iterator<Buffer>): Generator<Buffer> {
  let out: Buffer[] = [];
  let bytes = 0;
  for (const piece of taken(head, rest)) {
    out.push(piece);
    bytes += piece.length;
    if (bytes >= WRITE_BYTES) {
      yield Buffer.concat(out, bytes);
      out = [];
      bytes = 0;
    }
  }
  if (out.length > 0) yield Buffer.concat(out, bytes);
}

const NONE = Buffer.alloc(0);

function* taken(head: Buffer[], rest: Iterator<Buffer>): Generator<Buffer> {
  for (let i = 0; i < head.length; i++) {
    const piece = head[i]!;
    head[i] = NONE;
    yield piece;
  }
  for (let r = rest.next(); !r.done; r = rest.next()) yield r.value;
}
