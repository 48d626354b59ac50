/**
 * Requests that offer an upgrade other than the WebSocket one (docs/security.md "HTTP limits").
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from '../core/errors.js';
import { finish } from './raw-answer.js';

/**
 * A request offering an upgrade the gateway does not speak (`Upgrade: h2c`, …) answered as the
 * HTTP/1.1 request it also is (RFC 9110 §7.8: a server may ignore Upgrade). node has already
 * handed the socket over as an upgrade, so the answer is written on it here and the connection
 * closed after it. A body cannot be read any more once node has let go of the socket: such a
 * request is answered 400.
 */
export function answerAsHttp1(
  server: Server,
  makeResponse: (req: IncomingMessage) => ServerResponse,
  req: IncomingMessage,
  socket: Duplex,
): void {
  const res = makeResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.once('finish', () => {
    res.detachSocket(socket as never);
    finish(socket);
  });
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody) {
    const json = JSON.stringify(
      errorBody(
        400,
        'BAD_REQUEST',
        `Upgrade: ${String(req.headers.upgrade).slice(0, 40)} is not offered here; send the request without it`,
      ),
    );
    res.writeHead(400, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    });
    res.end(json);
    return;
  }
  // nothing more will arrive for it
  req.push(null);
  server.emit('request', req, res);
}
