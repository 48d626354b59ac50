/**
 * The bearer check at the WebSocket upgrade, through src/api/http/ws-access.ts and the daemon's
 * streams server: no token, a bad one or one without svc/device.read is
 * refused before the upgrade with the same answer as on HTTP; a partner token connects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, partnerToken, postForm } from '../support/auth.js';
import { demoSite } from '../support/demo.js';
import { tryUpgrade } from '../support/ws-client.js';

const connect = (url: string, authorization?: string) => tryUpgrade(url, authorization ? { authorization } : {});

describe('WebSocket upgrade guard', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  const url = () => `${demo.url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime`;

  beforeAll(async () => {
    // the daemon's own streams server (src/main.ts wires it with wsAccess)
    demo = await demoSite({ speed: 60 });
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('refuses a missing, unknown or under-scoped token before the upgrade, and lets a partner in', async () => {
    const none = await connect(url());
    expect(none).toMatchObject({ open: false, status: 401, challenge: 'Bearer realm="sitegw"' });
    expect((none as { body: unknown }).body).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });

    const unknown = await connect(url(), 'Bearer sgw_at_nothing');
    expect(unknown).toMatchObject({ open: false, status: 401 });
    expect((unknown as { challenge: string }).challenge).toContain('error="invalid_token"');

    const c = demo.credentials;
    const planOnly = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'client_credentials', scope: 'svc/plan.read' },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
    const scoped = await connect(url(), `Bearer ${planOnly}`);
    expect(scoped).toMatchObject({ open: false, status: 403 });
    expect((scoped as { challenge: string }).challenge).toContain('scope="svc/device.read"');

    expect(await connect(url(), `Bearer ${await partnerToken(c)}`)).toEqual({ open: true });
  });
});
