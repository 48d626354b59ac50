/**
 * Refused WebSocket upgrades (issue 40 findings 1–3): `sitegw demo` in its own process gets, from
 * eight loopback addresses at once, upgrades whose Bearer token is junk, each connection opened
 * again as soon as the daemon answers. Before the fix a refused upgrade was ended but never
 * destroyed: the daemon held the socket (and its connection slot, counted for its address) until
 * the peer's close was read, which nothing read, so slots leaked by the dozen, addresses holding
 * nothing were refused 503, and a SIGTERM never finished (the HTTP server waited for them).
 * What must hold after the attack, every attacker socket closed: the daemon holds no socket of
 * the port but the probe's, a partner on a fifth address opens a WebSocket and is served, and a
 * SIGTERM ends the process within 10 s.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldByAddress, slotsOf, socketFds } from '../support/admission.js';
import { partnerToken, rawRequest } from '../support/auth.js';
import { type ChildDemo, childDemo } from '../support/child-daemon.js';
import { waitFor } from '../support/demo.js';
import { unitRuntime } from '../support/unit-runtime.js';
import { StreamClient } from '../support/ws-client.js';

const ATTACKERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const PARTNER = '127.0.0.20';
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const ATTACK_MS = 4000;
const PER_ADDRESS = 16;

function upgrade(port: number, addr: string, token: string): Socket {
  const s = connect({ port, host: '127.0.0.1', localAddress: addr });
  s.on('error', () => undefined);
  s.once('connect', () =>
    s.write(
      `GET /ws?streams=grid-events HTTP/1.1\r\nHost: g\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    ),
  );
  return s;
}

describe('attack: refused WebSocket upgrades from eight addresses', () => {
  let d: ChildDemo;
  let port: number;
  let baseline: number;

  beforeAll(async () => {
    const runtime = unitRuntime();
    d = await childDemo({ nodeArgs: runtime.args, env: runtime.env });
    port = Number(new URL(d.url).port);
    baseline = socketFds(d.child.pid!);
  }, 90_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('leaves no socket and no slot behind, and a partner is served', {
    timeout: 90_000,
  }, async () => {
    const open = new Set<Socket>();
    let running = true;
    let refused = 0;
    const spawn = (addr: string, i: number) => {
      if (!running) return;
      const s = upgrade(port, addr, `sgw_at_junk${addr}${i}`);
      open.add(s);
      s.on('data', (b: Buffer) => {
        if (b.toString('latin1').startsWith('HTTP/1.1 401')) refused++;
        // the attacker hangs up as soon as it has its answer, and tries again
        s.destroy();
      });
      s.once('close', () => {
        open.delete(s);
        setImmediate(() => spawn(addr, i + 1));
      });
    };
    for (const a of ATTACKERS) for (let i = 0; i < PER_ADDRESS; i++) spawn(a, i * 1000);
    await new Promise((r) => setTimeout(r, ATTACK_MS));
    running = false;
    for (const s of open) s.destroy();
    expect(refused, 'the upgrades were refused').toBeGreaterThan(ATTACKERS.length * PER_ADDRESS);

    // the daemon lets go of every attacker's socket (it may take a moment to read their closes)
    const pid = d.child.pid!;
    const held = await waitFor(
      'the attackers’ sockets released',
      () => {
        const h = heldByAddress(pid, port);
        return h.size === 0 && socketFds(pid) <= baseline ? h : false;
      },
      10_000,
    ).catch(() => heldByAddress(pid, port));
    expect([...held], 'connections the daemon holds').toEqual([]);
    expect(socketFds(pid), 'socket descriptors of the daemon').toBeLessThanOrEqual(baseline);
    const token = await partnerToken(d.credentials);
    // the slots the daemon counts: none for an attacker, and each for a socket it has
    const slots = await slotsOf(d.url, token);
    expect(slots.slots).toBe(slots.sockets);
    expect(ATTACKERS.filter((a) => slots.byAddress.has(a))).toEqual([]);

    // an address that held nothing is admitted, and a partner's WebSocket opens
    for (const a of ATTACKERS.slice(0, 4)) {
      const r = await rawRequest({ url: `${d.url}/healthz`, localAddress: a });
      expect(r.status, r.text).toBe(200);
    }
    const ws = await StreamClient.connect(`${d.url.replace(/^http/, 'ws')}/ws?streams=grid-events`, token);
    ws.close();
    expect((await rawRequest({ url: `${d.url}/healthz`, localAddress: PARTNER })).status).toBe(200);
  });

  it('SIGTERM after the attack ends the process within 10 s', { timeout: 30_000 }, async () => {
    // a refused upgrade whose client never hangs up: the daemon must not wait for it to stop
    const stuck = Array.from({ length: 8 }, (_, i) => upgrade(port, ATTACKERS[i]!, 'sgw_at_junk'));
    await new Promise((r) => setTimeout(r, 500));
    d.child.kill('SIGTERM');
    const ended = await Promise.race([d.exit, new Promise((r) => setTimeout(() => r('still running'), 10_000))]);
    for (const s of stuck) s.destroy();
    expect(ended).toMatchObject({ code: 0 });
  });
});
