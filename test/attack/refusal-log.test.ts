/**
 * The daemon's log names the client behind refused requests and connections (its socket peer
 * address), and a flood of refusals cannot fill the disk through it: past a burst the lines are
 * counted, not written. Read from the real daemon's log output over real sockets, each client
 * on its own loopback source address.
 */
import { connect } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { basic, FORM, rawRequest } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';

interface Line {
  msg: string;
  remote?: string;
  statusCode?: number | string;
  path?: string;
  notLogged?: number;
}

describe('refusals are logged with the client address, bounded', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  const lines: Line[] = [];
  const refused = (remote: string) => lines.filter((l) => l.msg === 'refused' && l.remote === remote);

  beforeAll(async () => {
    // debug: served requests' lines are debug (src/api/http/app.ts), refusals are logged at any level
    const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    demo = await demoSite({ speed: 60, log, configure: (c) => void (c.limits.http.headersSeconds = 1) });
  });
  afterAll(async () => {
    await demo?.cleanup();
    expectNoSecrets(lines.map((l) => JSON.stringify(l)));
  });

  it('a request served is logged with its address (at debug)', async () => {
    expect((await rawRequest({ url: `${demo.url}/healthz`, localAddress: '127.0.0.6' })).status).toBe(200);
    expect(lines.find((l) => l.msg === 'request' && l.remote === '127.0.0.6' && l.path === '/healthz')).toBeDefined();
  });

  it('a wrong client secret on the token endpoint', async () => {
    const r = await rawRequest({
      method: 'POST',
      url: demo.credentials.tokenUrl,
      localAddress: '127.0.0.8',
      headers: { ...FORM, authorization: basic(demo.credentials.client.id, 'wrong') },
      body: 'grant_type=client_credentials',
    });
    expect(r.status).toBe(401);
    expect(refused('127.0.0.8')).toEqual([expect.objectContaining({ statusCode: 401, path: '/oauth2/token' })]);
  });

  it('a connection that never sends its request is cut, and that is logged with its address', {
    timeout: 20_000,
  }, async () => {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(demo.url).port), localAddress: '127.0.0.7' });
    socket.on('error', () => undefined);
    // read the 408, or the socket never sees the end that closes it
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    await waitFor('the 408 line', () => refused('127.0.0.7').length > 0);
    expect(refused('127.0.0.7')[0]).toMatchObject({ statusCode: 408 });
  });

  it('a flood of bad tokens: the first ones are logged with the address, the rest counted, not written', async () => {
    const n = attackCount(40);
    for (let i = 0; i < n; i++) {
      const r = await rawRequest({
        url: `${demo.url}/api/v1/devices`,
        localAddress: '127.0.0.9',
        headers: { authorization: `Bearer sgw_at_guess${i}` },
      });
      expect(r.status).toBe(401);
    }
    const logged = refused('127.0.0.9');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged[0]).toMatchObject({ statusCode: 401, path: '/api/v1/devices' });
    expect(logged.length).toBeLessThan(n / 2);
    expect(lines.filter((l) => /faster than they are logged/.test(l.msg)).length).toBeGreaterThan(0);
    // none of the refused requests reached the per-request line either
    expect(lines.filter((l) => l.msg === 'request' && l.remote === '127.0.0.9')).toEqual([]);
  });
});
