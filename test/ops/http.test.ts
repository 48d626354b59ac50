/**
 * /healthz, /metrics and the status page's login over real HTTP on a demo site whose house
 * meter points at a port nobody answers on, so one device is failing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setClientDevices } from '../../src/store/clients.js';
import { basic, partnerToken, postForm } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

describe('health, metrics and the owner login', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;

  beforeAll(async () => {
    demo = await demoSite({
      speed: 60,
      configure: (c) => {
        const house = c.devices.find((d) => d.id === 'house-meter')!;
        if (house.connection.type === 'tcp') house.connection.port = 9;
      },
    });
    token = await partnerToken(demo.credentials);
    await waitFor('the inverter online', () => demo.daemon.site.devices.get('inverter')!.online);
    await waitFor('the house meter failing', () => demo.daemon.site.devices.get('house-meter')!.errors.connection > 0);
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('/healthz answers without a token: degraded, the failing device in words, no site data', async () => {
    const res = await fetch(`${demo.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = await res.text();
    const body = JSON.parse(text) as { status: string; uptimeSeconds: number; problems: string[]; clock: string };
    expect(Object.keys(body).sort()).toEqual(['clock', 'problems', 'status', 'uptimeSeconds']);
    expect(body.clock).toMatch(/^the wall clock, checked against the monotonic clock/);
    expect(body.status).toBe('degraded');
    expect(body.problems).toEqual(['1 of 5 devices not answering (connection: 1)']);
    for (const id of demo.daemon.site.devices.keys()) expect(text).not.toContain(id);
    expect(text).not.toContain(demo.siteId);
  });

  it('/healthz is 503 while the main loop is unhealthy', async () => {
    try {
      // a real write that works meanwhile (a bucket close, on a loaded machine) clears the noted
      // failure, as it should: noted again before each ask until one answer sees it
      const r = await waitFor('/healthz answering 503', async () => {
        demo.daemon.ctx.ops.health.noteWrite(new Error('disk I/O error'));
        const a = await getJson(`${demo.url}/healthz`);
        return a.status === 503 ? a : undefined;
      });
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('failing');
      // a writer's bare error is told with the database file (ops/data-disk.ts describeStorageError)
      expect(r.body.problems[0]).toMatch(
        /^writing to the database failed: writing \/.*\/sitegw\.db failed: disk I\/O error; /,
      );
    } finally {
      demo.daemon.ctx.ops.health.noteWrite();
    }
  });

  it('/metrics needs a token with device.read', async () => {
    expect((await fetch(`${demo.url}/metrics`)).status).toBe(401);
    const planOnly = (
      await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'client_credentials', scope: 'svc/plan.read' },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      )
    ).body.access_token;
    expect((await fetch(`${demo.url}/metrics`, { headers: { authorization: `Bearer ${planOnly}` } })).status).toBe(403);
  });

  it('/metrics: poll latency histograms and error counts per device, bucket lag, WebSocket clients, database size, storage writes', async () => {
    await waitFor('a closed bucket', async () => /^sitegw_bucket_lag_seconds /m.test(await metrics(token)), 30_000);
    const text = await metrics(token);
    expect(text).toMatch(/^sitegw_device_poll_seconds_count\{device="inverter",outcome="ok"\} [1-9]\d*$/m);
    expect(text).toMatch(/^sitegw_device_poll_seconds_count\{device="house-meter",outcome="error"\} [1-9]\d*$/m);
    const errors = Number(
      /^sitegw_device_errors_total\{device="house-meter",kind="connection"\} (\d+)$/m.exec(text)?.[1],
    );
    expect(errors).toBeGreaterThan(0);
    expect(errors).toBeLessThanOrEqual(demo.daemon.site.devices.get('house-meter')!.errors.connection);
    expect(text).toMatch(/^sitegw_device_online\{device="house-meter"\} 0$/m);
    expect(text).toMatch(/^sitegw_device_online\{device="inverter"\} 1$/m);
    // at most one bucket period plus the close grace behind, on the daemon clock
    const lag = Number(/^sitegw_bucket_lag_seconds (\S+)$/m.exec(text)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(15 * 60 + 60);
    expect(text).toMatch(/^sitegw_ws_clients 0$/m);
    expect(Number(/^sitegw_database_size_bytes (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(4096);
    expect(text).toMatch(/^sitegw_storage_written_bytes_total \d+$/m);
    expect(text).toMatch(/^sitegw_main_loop_healthy 1$/m);
    // no uplink configured: its series are absent, not zero
    expect(text).not.toContain('sitegw_uplink_outbox_messages');
  });

  it('/metrics shows a partner the device series of its own devices only', async () => {
    setClientDevices(demo.daemon.ctx.db, demo.credentials.client.id, ['inverter']);
    try {
      const text = await metrics(await partnerToken(demo.credentials));
      expect(text).toContain('device="inverter"');
      // the blocks behind its inverter are its own too (docs/design.md "partner vs customer")
      expect(text).toContain('device="battery-1"');
      expect(text).not.toContain('device="house-meter"');
      expect(text).not.toContain('device="grid-meter"');
      expect(text).toMatch(/^sitegw_database_size_bytes \d+$/m);
    } finally {
      setClientDevices(demo.daemon.ctx.db, demo.credentials.client.id, [...demo.daemon.site.devices.keys()]);
    }
  });

  it('the status page: a browser without a session goes to the login; a wrong password is refused', async () => {
    const page = await fetch(`${demo.url}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/login');
    const wrong = await login('owner', 'not the password');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('login sets an HttpOnly SameSite=Strict cookie; the session opens /status.json; logout ends it', async () => {
    const ok = await login(demo.credentials.owner.username, demo.credentials.owner.password);
    expect(ok.status).toBe(303);
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^sitegw_session=sgw_ss_[\w-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    const session = cookie.split(';')[0]!;
    const status = await fetch(`${demo.url}/status.json`, { headers: { cookie: session } });
    expect(status.status).toBe(200);
    const view = (await status.json()) as {
      devices: { id: string; online: boolean; errors: Record<string, number> }[];
      flow: { pvW: number | null };
    };
    expect(view.devices.find((d) => d.id === 'house-meter')).toMatchObject({ online: false });
    expect(view.devices.find((d) => d.id === 'house-meter')!.errors.connection).toBeGreaterThan(0);
    const out = await fetch(`${demo.url}/logout`, {
      method: 'POST',
      headers: { cookie: session, origin: demo.url },
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    expect((await fetch(`${demo.url}/status.json`, { headers: { cookie: session } })).status).toBe(401);
  });

  it('a login form posted from another site is refused before the password is checked (CSRF)', async () => {
    const res = await login(demo.credentials.owner.username, demo.credentials.owner.password, {
      origin: 'http://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(((await res.json()) as { code: string }).code).toBe('CROSS_SITE_FORM');
  });

  it('a forged or garbage session cookie opens nothing', async () => {
    for (const cookie of [
      'sitegw_session=sgw_ss_forged',
      'sitegw_session=',
      `sitegw_session=${'x'.repeat(5000)}`,
      'other=1',
    ]) {
      expect((await fetch(`${demo.url}/status.json`, { headers: { cookie } })).status).toBe(401);
    }
  });

  async function metrics(bearerToken: string): Promise<string> {
    const res = await fetch(`${demo.url}/metrics`, { headers: { authorization: `Bearer ${bearerToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  }

  function login(username: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${demo.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ username, password }).toString(),
      redirect: 'manual',
    });
  }
});
