/**
 * Realtime sessions end with their grant (issue 14 finding 3). A running daemon, real stream
 * clients; each grant is ended the way an installer or the token service ends it: expiry (the
 * token service's clock moved past the token's lifetime), `sitegw clients rotate-secret`,
 * `clients remove` and `clients assign` through the CLI command's own code on its own database
 * connection (as the separate process does), and a refresh family revoked by replaying a spent
 * refresh token. Each open socket is closed with its documented code (docs/security.md), and a
 * bystander whose grant still holds stays connected through all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANT_CLOSE } from '../../src/api/ws/server.js';
import { clientsCommand } from '../../src/cli/clients.js';
import { attackLog } from '../support/attack-log.js';
import { basic, bearer, customerTokens, get, partnerToken, postForm } from '../support/auth.js';
import { demoSite } from '../support/demo.js';
import { StreamClient } from '../support/ws-client.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;

/** every line the daemons of this file log, scanned for secrets at its end (support/attack-log.ts) */
const { log } = attackLog();

describe('WebSocket sessions end with their grant', () => {
  let demo: Demo;
  let shiftMs = 0;
  let bystander: StreamClient;
  const wsUrl = () => `${demo.url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime,grid-events`;

  /** `sitegw clients ...` as the installer runs it, against the daemon's data directory */
  async function cli(...args: string[]): Promise<string> {
    let out = '';
    let err = '';
    const code = await clientsCommand([...args, '--data-dir', demo.dataDir], {
      out: (s) => (out += s),
      err: (s) => (err += s),
    });
    if (code !== 0) throw new Error(`sitegw clients ${args.join(' ')}: exit ${code}: ${err}`);
    return out;
  }

  /** a fresh partner client and a token for it */
  async function partner(id: string, devices = ['grid-meter']): Promise<{ secret: string; token: string }> {
    const out = await cli('add', id, '--scope', 'svc/device.read', ...devices.flatMap((d) => ['--device', d]));
    const secret = /client secret: (\S+)/.exec(out)![1]!;
    const r = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'client_credentials' },
      { authorization: basic(id, secret) },
    );
    expect(r.status).toBe(200);
    return { secret, token: r.body.access_token as string };
  }

  /** connects and resolves with the close code and reason once the server closes the socket */
  async function session(
    token: string,
  ): Promise<{ client: StreamClient; closed: Promise<{ code: number; reason: string }> }> {
    const client = await StreamClient.connect(wsUrl(), token);
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      client.ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
    );
    return { client, closed };
  }

  beforeAll(async () => {
    demo = await demoSite({
      log,
      speed: 60,
      wsGrantRecheckMs: 100,
      authNow: () => Date.now() + shiftMs,
    });
    bystander = await StreamClient.connect(wsUrl(), await partnerToken(demo.credentials));
  });
  afterAll(async () => {
    bystander?.close();
    await demo?.cleanup();
  });

  it('token expiry: closed with 4401', async () => {
    const { token } = await partner('expiring');
    const s = await session(token);
    const bystanderToken = await partnerToken(demo.credentials);
    shiftMs = 3_600_000;
    try {
      expect(await s.closed).toEqual(GRANT_CLOSE.expired);
    } finally {
      shiftMs = 0;
    }
    // the bystander's token expired too while the clock was moved: it reconnects with one issued before
    bystander.close();
    bystander = await StreamClient.connect(wsUrl(), bystanderToken);
  });

  it('`sitegw clients rotate-secret`: closed with 4403, as HTTP answers 401', async () => {
    const { token } = await partner('rotating');
    const s = await session(token);
    await cli('rotate-secret', 'rotating');
    expect(await s.closed).toEqual(GRANT_CLOSE.revoked);
    expect((await get(`${demo.url}/api/v1/devices`, bearer(token))).status).toBe(401);
  });

  it('`sitegw clients remove`: closed with 4403', async () => {
    const { token } = await partner('leaving');
    const s = await session(token);
    await cli('remove', 'leaving');
    expect(await s.closed).toEqual(GRANT_CLOSE.revoked);
  });

  it('a refresh family revoked (a spent refresh token replayed): closed with 4403', async () => {
    const first = await customerTokens(demo.credentials);
    const refresh = (refresh_token: string) =>
      postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'refresh_token', refresh_token },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      );
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    const s = await session(second.body.access_token);
    expect((await refresh(first.refresh_token)).status).toBe(400);
    expect(await s.closed).toEqual(GRANT_CLOSE.revoked);
  });

  it('`sitegw clients assign` with other devices: closed with 4409, and the same token connects again', async () => {
    const { token } = await partner('moving', ['grid-meter']);
    const s = await session(token);
    await cli('assign', 'moving', '--device', 'inverter');
    expect(await s.closed).toEqual(GRANT_CLOSE['devices-changed']);
    const again = await StreamClient.connect(wsUrl(), token);
    again.close();
  });

  it('a socket whose grant holds stays open through the revocations of other grants', () => {
    expect(bystander.closed).toBeNull();
  });
});
