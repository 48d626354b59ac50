/**
 * The defects the fuzz suites found, each pinned by the smallest input that showed it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

describe('fuzz findings stay fixed', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  beforeAll(async () => {
    demo = await demoSite({ speed: 1 });
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('a JSON array as the token request body is a 400 invalid_request, not a 500 (it passed for form pairs)', async () => {
    for (const body of ['[1]', '[["grant_type"]]', '[null]', '[{"grant_type":"client_credentials"}]']) {
      const res = await fetch(demo.credentials.tokenUrl, {
        method: 'POST',
        headers: {
          authorization: basic(demo.credentials.client.id, demo.credentials.client.secret),
          'content-type': 'application/json',
        },
        body,
      });
      expect({ body, status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({
        body,
        status: 400,
        error: 'invalid_request',
      });
    }
  });

  it('a JSON array posted to the consent form is a 400 page, not a 500', async () => {
    const res = await fetch(demo.credentials.authorizeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"a":1},"x"]',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
  });
});
