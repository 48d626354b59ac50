/**
 * An HTTP answer written on a socket no HTTP server looks after any more (a refused connection,
 * a refused WebSocket upgrade, an upgrade answered as HTTP/1.1), then the socket destroyed.
 *
 * Ending it is not enough: the API port's sockets are half-open (node's HTTP server), and once
 * node has handed a socket over as an upgrade nothing reads it, so the peer's close is never
 * seen and an ended socket stayed open, with its connection slot, for as long as the process
 * lived (issue 40 finding 1). Here the socket is destroyed once the answer is flushed, and after
 * `FLUSH_MS` whether it was or not (a peer that takes nothing is not waited for).
 */
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from '../core/node-http.js';

/** how long a refused peer has to take its answer before its socket is destroyed anyway */
export const FLUSH_MS = 2000;

/** Ends `socket` after `data` (or at once) and destroys it when flushed, or after FLUSH_MS at the latest. */
export function finish(socket: Duplex, data?: string): void {
  if (socket.destroyed) return;
  const destroy = () => socket.destroy();
  socket.once('finish', destroy);
  socket.once('error', destroy);
  if (data === undefined) socket.end();
  else socket.end(data);
  setTimeout(destroy, FLUSH_MS).unref();
}

/** A JSON answer (the API's error body) with `Connection: close`, then `finish`. */
export function answerRaw(socket: Duplex, status: number, body: object, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  finish(
    socket,
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n${extra}\r\n${json}`,
  );
}
