/**
 * A lingering close (RFC 9112 section 9.6; Apache's and nginx's `lingering_close`): a request
 * refused before its body was read is answered and its connection closed, but a socket destroyed
 * while the peer is still sending answers the peer's next bytes with a reset, and the peer's next
 * write then fails before it has read the answer: the client sees EPIPE instead of the 400 that
 * names what it did wrong (test/attack/body-trickle). So the write side is ended first (the
 * answer, then FIN) and the rest of the body is read and dropped until the peer stops, for
 * LINGER_MS and LINGER_BYTES at most: a peer that goes on sending is cut off. Dropped, not left
 * unread: node's request keeps what it is not asked for, and 16 such connections trickling a byte
 * a chunk held 326 MiB for their 2 s on Node 24 (its 64 KiB default high-water mark of chunks,
 * each a view of a read buffer).
 *
 * Bounded by the bytes on the wire, not the body's chunks: what a busy client sent before it read
 * the answer is already on its way, and a bound of 1,024 chunks (6 KiB of 1-byte chunks) reset a
 * client 3,585 chunks (21 KB) ahead on a loaded CI machine before it read its 400. Each chunk is
 * counted with the least framing a chunk has (`1\r\n…\r\n`, 5 bytes), since node's parser costs
 * about 2 µs a chunk whatever its size. Node parses the read that passes the bound to its end (up
 * to 64 KiB more), so a linger costs at most some 22,000 chunks, 40 ms of parsing, where the body
 * it follows cost 1,024. (The socket's bytesRead is no bound: it counts whole reads, already read.)
 */
import type { IncomingMessage } from 'node:http';

/** the longest a refused connection is read after its answer, ms */
export const LINGER_MS = 2000;
/** the most bytes of a refused body, with its chunks' framing, read after its answer */
export const LINGER_BYTES = 64 * 1024;

/** the fewest bytes a chunk's framing takes on the wire: `1\r\n` before it, `\r\n` after */
const CHUNK_FRAMING = 5;

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
    let wire = 0;
    const drop = (chunk: Buffer) => {
      wire += chunk.length + CHUNK_FRAMING;
      if (wire > LINGER_BYTES) this.destroy();
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
