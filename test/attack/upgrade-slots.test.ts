/**
 * Refused WebSocket upgrades (issue 40 findings 1–3): `sitegw demo` in its own process gets, from
 * eight loopback addresses at once, upgrades whose Bearer token is junk; each attacker reads its
 * 401 and keeps its side of the connection open (half-open: it does not answer the daemon's FIN), opening a new one only when the daemon closes it. Before the fix
 * a refused upgrade was ended but never destroyed, and node's timeouts no longer watch a socket
 * handed over as an upgrade: the daemon held each one (and its slot, counted for its address)
 * for as long as the client liked, and a SIGTERM waited for them for ever. What must hold: the
 * daemon closes every refused upgrade within its flush bound, holds no attacker's socket or slot
 * afterwards, admits those addresses again, serves a partner, and SIGTERM with refused upgrades
 * held open ends the process within 10 s.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldByAddress, portSockets, slotsOf } from '../support/admission.js';
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

/** An upgrade with a junk token; the client keeps its side open after the daemon's FIN (half-open), as a hostile tool may. */
function upgrade(port: number, addr: string, token: string): Socket {
  const s = connect({ port, host: '127.0.0.1', localAddress: addr, allowHalfOpen: true });
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

  beforeAll(async () => {
    const runtime = unitRuntime();
    d = await childDemo({ nodeArgs: runtime.args, env: runtime.env });
    port = Number(new URL(d.url).port);
  }, 90_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('a refused upgrade whose client keeps the connection is closed by the daemon; no slot stays behind', {
    timeout: 90_000,
  }, async () => {
    const open = new Set<Socket>();
    let running = true;
    let refused = 0;
    const spawn = (addr: string, i: number) => {
      if (!running) return;
      const s = upgrade(port, addr, `sgw_at_junk${addr}${i}`);
      open.add(s);
      // the attacker reads its 401 and keeps the connection: only the daemon can end it. After
      // the daemon's FIN it keeps writing: a socket the daemon has let go of answers with a reset
      s.on('data', (b: Buffer) => {
        if (b.toString('latin1').startsWith('HTTP/1.1 401')) refused++;
      });
      s.once('end', () => {
        const poke = setInterval(() => (s.destroyed ? clearInterval(poke) : s.write('x')), 200);
      });
      s.once('close', () => {
        open.delete(s);
        setImmediate(() => spawn(addr, i + 1));
      });
    };
    for (const a of ATTACKERS) for (let i = 0; i < PER_ADDRESS; i++) spawn(a, i * 1000);
    await new Promise((r) => setTimeout(r, ATTACK_MS));
    running = false;
    expect(refused, 'the upgrades were refused').toBeGreaterThanOrEqual(ATTACKERS.length * PER_ADDRESS);
    // every refused connection is ended by the daemon within its flush bound (2 s), whatever the client does
    const left = await waitFor('the daemon closing every refused upgrade', () => open.size === 0 || false, 5_000).then(
      () => 0,
      () => open.size,
    );
    for (const s of open) s.destroy();
    expect(left, 'refused upgrades still open 5 s after the attack').toBe(0);

    const pid = d.child.pid!;
    const held = await waitFor('the attackers’ sockets released', () => portSockets(pid, port) === 0 || false, 10_000)
      .then(() => 0)
      .catch(() => portSockets(pid, port));
    expect(held, 'sockets the daemon holds on the port, in any state').toBe(0);
    expect([...heldByAddress(pid, port)]).toEqual([]);
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
