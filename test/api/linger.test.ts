/**
 * The lingering close's bound (src/api/http/linger.ts): after a refused body's answer the rest is
 * read and dropped until the peer stops, for 64 KiB counted with each chunk's framing (and the rest
 * of the read that passes it). Its 2 s timer is faked and never fires here, so a connection that
 * ends did so by the peer or the bytes.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LINGER_BYTES, lingerOnClose } from '../../src/api/http/linger.js';

const CHUNK = '1\r\n \r\n';
/** the most node reads from a socket at once */
const READ_BYTES = 64 * 1024;

describe('the lingering close after a refused body', () => {
  let server: Server;
  let port: number;
  let dropped: number;
  /** the refused connection's server side closed */
  let serverClosed: Promise<void>;

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dropped = 0;
    // refuses a body at its first chunk, as the API's BODY_ errors do mid-way (a request not read
    // from at all node dumps, listeners and all)
    server = createServer((req, res) => {
      serverClosed = new Promise((r) => req.socket.once('close', () => r()));
      req.on('data', (c: Buffer) => (dropped += c.length));
      req.once('data', () => {
        lingerOnClose(req);
        res.writeHead(400, { connection: 'close', 'content-length': '2' });
        res.end('no');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterEach(async () => {
    vi.useRealTimers();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** sends a chunked PUT, reads the answer, then sends `more` 1-byte chunks */
  async function refusedThenSends(more: number, thenEnd: boolean) {
    // half-open: it goes on sending after the answer's FIN, as a client busy sending does
    const s: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    let error = '';
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('error', (e) => (error = e.message));
    s.write(`PUT /x HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: chunked\r\n\r\n${CHUNK}`);
    await new Promise<void>((r) => s.once('end', r));
    s.write(CHUNK.repeat(more));
    if (thenEnd) s.end();
    await serverClosed;
    s.destroy();
    return { text, error };
  }

  it('a client far ahead of its answer reads it, and its rest is dropped to its end', async () => {
    // 10,000 chunks (60,000 bytes on the wire): more than the 1,024 a linger once read
    const more = Math.floor(LINGER_BYTES / CHUNK.length) - 900;
    const r = await refusedThenSends(more, true);
    expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(r.error).toBe('');
    expect(dropped).toBe(1 + more);
  });

  it('a client that goes on sending past the bound is cut off, without the timer', async () => {
    // past the bound and the read it ends in, which node parses to its end (up to 64 KiB)
    const more = Math.ceil((LINGER_BYTES + READ_BYTES) / CHUNK.length) + 2000;
    const r = await refusedThenSends(more, false);
    expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
    // cut off within the bound and a read (the one chunk before the answer aside)
    expect(dropped - 1).toBeLessThan(more);
    expect((dropped - 1) * CHUNK.length).toBeLessThanOrEqual(LINGER_BYTES + READ_BYTES);
  });
});
