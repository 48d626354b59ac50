/**
 * The daemon keeps bearer tokens that checked out (src/auth/verified-tokens.ts). An installer's
 * `sitegw clients assign` or `remove`, run as its own process on the daemon's database while it
 * serves, must still take effect on the partner's very next request.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { sitegwCommand } from '../support/cli.js';
import { demoSite, getJson } from '../support/demo.js';

let demo: Awaited<ReturnType<typeof demoSite>>;
beforeAll(async () => {
  demo = await demoSite();
});
afterAll(async () => {
  await demo?.cleanup();
});

function clients(...args: string[]): string {
  const [cmd, argv] = sitegwCommand(['clients', ...args, '--data-dir', demo.dataDir]);
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

describe('a token the daemon already trusts', () => {
  it('sees a device assignment changed by another process at once, and is refused once its client is removed', async () => {
    const c = demo.credentials;
    const token = await partnerToken(c);
    const devices = async () => {
      const r = await getJson(`${c.apiUrl}/api/v1/devices`, token);
      expect(r.status).toBe(200);
      return (r.body.devices as { deviceId: string }[]).map((d) => d.deviceId).sort();
    };
    const before = await devices();
    expect(before.length).toBeGreaterThan(1);
    // asked twice: the second answer comes from the trusted token, not from the token table
    expect(await devices()).toEqual(before);

    const keep = before[0]!;
    expect(clients('assign', c.client.id, '--device', keep)).toContain(`devices:       ${keep}`);
    expect(await devices()).toEqual([keep]);

    expect(clients('remove', c.client.id)).toContain(`removed client ${c.client.id}`);
    const refused = await getJson(`${c.apiUrl}/api/v1/devices`, token);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('INVALID_TOKEN');
  });
});
