/**
 * A lingering close (RFC 9112 section 9.6; Apache's and nginx's `lingering_close`): a request
 * refused before its body was read is answered and its connection closed, but a socket destroyed
 * while the peer's bytes are unread has the kernel send a reset, and a reset can take the answer
 * with it: the client sees EPIPE or ECONNRESET instead of the 400 that names what it did wrong
 * (test/attack/body-trickle). So the write side is ended first (the answer, then FIN) and the
 * socket destroyed LINGER_MS later, or at once when the peer has closed its side: time for the
 * client to read its answer and stop. The rest of the body is not read meanwhile (parsing a
 * trickle of it is what the refusal saves): the peer's bytes wait in the kernel, and once its
 * window is full its writes wait too.
 */
import type { IncomingMessage } from 'node:http';

/** how long a refused connection stays half-closed after its answer, ms */
export const LINGER_MS = 2000;

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
    // the whole body came: nothing unread, a close after the answer resets nothing
    if (req.complete || this.readableEnded) {
      if (this.writableFinished) this.destroy();
      else this.once('finish', () => this.destroy());
      return;
    }
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}
