/**
 * Request bodies at the HTTP edge (docs/security.md "HTTP limits"), and the names of what fastify
 * and node refuse before a route runs, so every answer carries a sitegw code (docs/api.md
 * "Errors"), never FST_ERR_*.
 *
 * - A JSON body is read as a Buffer and parsed here: an empty one is no body (a DELETE or an
 *   OPTIONS sent with `Content-Type: application/json`, as curl examples do), a broken one is
 *   400 INVALID_BODY, a `__proto__` member is refused as fastify's own parser refuses it.
 * - Every body, authenticated or not, passes `BoundedBody` before it is parsed: its bytes are
 *   copied into buffers of their own as they come (fastify kept each chunk node read, a view
 *   holding the socket's whole read buffer: 1-byte chunks from 16 connections took RSS to
 *   403 MiB, issue 40 finding 4), and a body sent in more than `MAX_SMALL_CHUNKS` chunks
 *   averaging under `MIN_CHUNK_BYTES` is refused 400 BODY_TOO_FRAGMENTED: each chunk costs the
 *   parser a callback, and a trickle of them from a few connections starved polling for a
 *   minute. A refused body's connection is closed after its answer, so the rest is not read
 *   (with a lingering close, linger.ts, so the client reads the answer).
 */

import type { Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, apiError, errorBody } from '../../core/errors.js';
import { answerRaw } from '../raw-answer.js';

/** `__proto__` anywhere in a body: nothing of sitegw's reads it, and a merge elsewhere could be poisoned by it */
function noProto(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new SyntaxError('a member named __proto__ is not accepted');
  return value;
}

/** chunks a body may come in before their mean size counts */
export const MAX_SMALL_CHUNKS = 1024;
/** the smallest mean chunk size past MAX_SMALL_CHUNKS chunks, bytes */
export const MIN_CHUNK_BYTES = 256;
/** bytes collected before they are passed on to the parser */
const COALESCE = 16 * 1024;

/** A request body as it arrives: copied, coalesced, counted (see the top). */
export class BoundedBody extends Transform {
  receivedEncodedLength = 0;
  private chunks = 0;
  private pending: Buffer = Buffer.allocUnsafe(COALESCE);
  private filled = 0;

  constructor(private readonly refused: () => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.chunks++;
    this.receivedEncodedLength += chunk.length;
    if (this.chunks > MAX_SMALL_CHUNKS && this.receivedEncodedLength / this.chunks < MIN_CHUNK_BYTES) {
      this.refused();
      cb(
        apiError(
          'BODY_TOO_FRAGMENTED',
          `the body came in more than ${MAX_SMALL_CHUNKS} chunks of under ${MIN_CHUNK_BYTES} bytes on average; send it in larger pieces`,
        ),
      );
      return;
    }
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(chunk.length - at, COALESCE - this.filled);
      chunk.copy(this.pending, this.filled, at, at + n);
      this.filled += n;
      at += n;
      if (this.filled === COALESCE) this.flushPending();
    }
    cb();
  }

  override _flush(cb: TransformCallback): void {
    this.flushPending();
    cb();
  }

  private flushPending(): void {
    if (this.filled === 0) return;
    this.push(this.filled === COALESCE ? this.pending : Buffer.from(this.pending.subarray(0, this.filled)));
    this.pending = Buffer.allocUnsafe(COALESCE);
    this.filled = 0;
  }
}

/** the methods whose body fastify never reads (its handle-request.js runs the handler at once) */
const BODYLESS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'TRACE']);

/** The JSON body parser of every route (fastify's own refuses an empty body with its own code). */
export function installJsonBody(app: FastifyInstance): void {
  app.addHook('preParsing', (req, reply, payload, done) => {
    // fastify parses no body of its bodyless methods (GET, HEAD, TRACE): nothing to bound, and
    // the Transform, its buffer and the pipe were a fair part of what a GET cost beyond a bare
    // route (bench/README.md "A day not asked before")
    if (BODYLESS.has(req.method)) return done(null, payload);
    done(null, payload.pipe(new BoundedBody(() => reply.header('Connection', 'close'))));
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    const buf = body as Buffer;
    if (buf.length === 0 || buf.toString('latin1').trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(buf.toString('utf8'), noProto));
    } catch (e) {
      const why = e instanceof SyntaxError ? e.message.slice(0, 120) : 'unreadable';
      done(apiError('INVALID_BODY', `the body is not valid JSON (${why})`) as unknown as FastifyError, undefined);
    }
  });
}

/** fastify's codes for what it refuses before a handler runs, and what sitegw answers instead */
const FRAMEWORK: Record<string, (err: FastifyError) => ApiError> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: () => apiError('INVALID_BODY', 'the body is empty; send JSON, or no Content-Type'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => apiError('INVALID_BODY', 'the body is not valid JSON'),
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new ApiError(413, 'BODY_TOO_LARGE', 'the body is larger than this endpoint accepts (docs/security.md)'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    apiError('INVALID_BODY', 'the body is not as long as its Content-Length says'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'this Content-Type is not accepted here; send application/json'),
  FST_ERR_CTP_INVALID_TYPE: () =>
    new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the Content-Type header is not a media type'),
  FST_ERR_CTP_INVALID_CONTENT_TYPE: () =>
    new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the Content-Type header is not a media type'),
};

/**
 * A 4xx error fastify raised as the sitegw error it is (with its code and a message of ours), or
 * the error itself when it is not fastify's. Any FST_ERR_* not listed is a 400 BAD_REQUEST.
 */
export function namedError(err: FastifyError): FastifyError | ApiError {
  if (err instanceof ApiError || typeof err.code !== 'string' || !err.code.startsWith('FST_')) return err;
  const known = FRAMEWORK[err.code];
  if (known) return known(err);
  const status =
    typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  return new ApiError(status, 'BAD_REQUEST', 'the request could not be read');
}

/**
 * What node's HTTP parser refuses before any request exists (fastify's `clientErrorHandler`):
 * a header block or request line over 16 KiB (431), a request it cannot parse (400), a request
 * too slow (408). fastify's own answer has no `code`; this one is the error body.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // a peer that hung up was refused nothing, and a socket already answered is left alone
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'REQUEST_TIMEOUT', 'the request did not arrive in time (limits.http); send it at once']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE', 'the request line and headers exceed 16 KiB; shorten the URL or the headers']
        : [400, 'BAD_REQUEST', 'the request is not HTTP/1.1 this gateway can read'];
  answerRaw(socket, status, errorBody(status, code, message));
}
