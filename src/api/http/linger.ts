/**
 * A lingering close (RFC 9112 section 9.6; Apache's and nginx's `lingering_close`): a request
 * refused before its body was read is answered and its connection closed, but a socket destroyed
 * while the peer is still sending answers the peer's next bytes with a reset, and the peer's next
 * write then fails before it has read the answer: the client sees EPIPE instead of the 400 that
 * names what it did wrong (test/attack/body-trickle). So the write side is ended first (the
 * answer, then FIN) and the rest of the body is read and dropped until the peer stops, for
 * LINGER_MS at most and LINGER_CHUNKS chunks at most, the refusal's own bound: a peer that goes
 * on sending is cut off as the refused body was. Dropped, not left unread: node's request keeps
 * what it is not asked for, and 16 such connections trickling a byte a chunk held 326 MiB for
 * their 2 s on Node 24 (its 64 KiB default high-water mark of chunks, each a view of a read
 * buffer).
 */
import type { IncomingMessage } from 'node:http';

/** the longest a refused connection is read after its answer, ms */
export const LINGER_MS = 2000;
/** the most chunks of a refused body read after its answer (body.ts MAX_SMALL_CHUNKS) */
export const LINGER_CHUNKS = 1024;
/** the most bytes of a refused body read after its answer */
export const LINGER_BYTES = 256 * 1024;

const lingering = new WeakSet<object>();

/**
 * Makes the close node's server does after this request's answer (`Connection: close`) a
 * lingering one. Call it before the answer is sent.
 */
export function lingerOnClose(req: IncomingMessage): void {
  const socket = req.socket;
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: typeof socket) {
    if (this.destroyed) return;
    if (this.writable) this.end();
    // the whole body came: nothing more to read, a close after the answer resets nothing
    if (req.complete || this.readableEnded) {
      if (this.writableFinished) this.destroy();
      else this.once('finish', () => this.destroy());
      return;
    }
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    let chunks = 0;
    let bytes = 0;
    const drop = (chunk: Buffer) => {
      bytes += chunk.length;
      if (++chunks > LINGER_CHUNKS || bytes > LINGER_BYTES) this.destroy();
    };
    req.on('data', drop);
    // the body's end or the peer's: nothing more is coming
    req.once('end', () => this.destroy());
    this.once('end', () => this.destroy());
    this.once('close', () => {
      clearTimeout(timer);
      req.off('data', drop);
    });
    req.resume();
  };
}
