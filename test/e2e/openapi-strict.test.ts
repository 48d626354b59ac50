/**
 * The OpenAPI document as strict as the server and no stricter (issue 44 item 6): before, 150 of
 * 150 document-valid tariff bodies and 110 of 150 plan bodies were refused (currency and timezone
 * free strings; powerW allowed on every mode). Here bodies the document allows, drawn from its own
 * enums and slot shapes, are stored; bodies it forbids for the rules the server checks are
 * refused by both.
 */
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerTokens, partnerToken } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('the OpenAPI document and the server agree on bodies', () => {
  let d: Demo;
  let doc: any;
  let token: string;
  let owner: string;
  const ajv = new Ajv({ strict: false });
  ajv.addKeyword({ keyword: 'example' });
  beforeAll(async () => {
    d = await demoSite();
    doc = await (await fetch(`${d.url}/openapi.json`)).json();
    token = await partnerToken(d.credentials);
    owner = (await customerTokens(d.credentials, 'svc/device.read svc/device.write')).access_token;
  }, 60_000);
  afterAll(async () => d?.cleanup());

  const bodySchema = (path: string, method: string) =>
    doc.paths[path][method].requestBody.content['application/json'].schema;

  it('a plan: powerW only where the mode takes it, in the document as on the server', async () => {
    const valid = ajv.compile(bodySchema('/api/v1/devices/{synthId}/plan', 'put'));
    const t = Math.ceil((Date.now() + 3_600_000) / Q) * Q;
    const slot = (i: number, extra: object) => ({ interval: `${iso(t + i * Q)}/${iso(t + (i + 1) * Q)}`, ...extra });
    const cases: [object, boolean][] = [
      [{ mode: 'charge', powerW: 1500 }, true],
      [{ mode: 'discharge', powerW: 800, targetSoc: 30 }, true],
      [{ mode: 'hold' }, true],
      [{ mode: 'self-consumption' }, true],
      [{ mode: 'hold', powerW: 100 }, false],
      [{ mode: 'self-consumption', targetSoc: 50 }, false],
      [{ mode: 'charge' }, false],
    ];
    for (const [i, [extra, ok]] of cases.entries()) {
      const body = { slots: [slot(i, extra)] };
      expect(valid(body), `document: ${JSON.stringify(extra)}`).toBe(ok);
      const r = await fetch(`${d.url}/api/v1/devices/inverter/plan`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, `server: ${JSON.stringify(extra)} ${await r.text()}`).toBe(ok ? 200 : 400);
    }
  });

  it('a tariff: every 50th currency and zone the document lists is stored; one it does not list is refused by both', async () => {
    const schema = bodySchema('/api/v1/dynamicTariffs', 'post');
    const valid = ajv.compile(schema);
    const named = schema.anyOf[0].properties;
    const currencies: string[] = named.currency.enum;
    const zones: string[] = named.timezone.enum;
    expect(currencies).toContain('EUR');
    expect(zones).toContain('Europe/Berlin');
    const post = (body: object) =>
      fetch(`${d.url}/api/v1/dynamicTariffs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < Math.max(currencies.length, zones.length); i += 50) {
      const body = {
        name: `t${i}`,
        currency: currencies[i % currencies.length],
        timezone: zones[i % zones.length],
        kind: 'import',
      };
      expect(valid(body), JSON.stringify(body)).toBe(true);
      const r = await post(body);
      expect(r.status, `${JSON.stringify(body)}: ${await r.text()}`).toBe(201);
    }
    for (const bad of [{ currency: 'EURO' }, { timezone: 'Mars/Olympus' }]) {
      const body = { name: 'bad', currency: 'EUR', timezone: 'Europe/Berlin', kind: 'import', ...bad };
      expect(valid(body)).toBe(false);
      expect((await post(body)).status).toBe(400);
    }
  });
});
