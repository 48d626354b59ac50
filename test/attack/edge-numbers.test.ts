/**
 * Numbers at the edge are numbers (issue 40 finding 5): a string, a boolean or a value JSON
 * cannot hold finitely never becomes a stored battery power or state of charge. Before the fix
 * the API's validator coerced request bodies as it does query strings: `{"powerW":"Infinity"}`
 * was stored as ±inf (the PUT answered 500 and so did every GET of the plan while it existed),
 * `powerW: true` as 1 W and `targetSoc: "Infinity"` as null with a 200. The MQTT plan command and
 * the reserve (HTTP PATCH, Home Assistant) share the checks (src/control/plan-body.ts,
 * Control.setReserve), so one fix covers every edge. Each bad body gets a named 400 whose message
 * names the slot and the field, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerPlanCommand } from '../../src/uplink/plan-command.js';
import { customerTokens, partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { demoControl } from '../support/demo-control.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('numbers at the edge', () => {
  let d: Demo;
  let token: string;
  let owner: string;
  beforeAll(async () => {
    d = await demoSite();
    token = await partnerToken(d.credentials);
    owner = (await customerTokens(d.credentials, 'svc/device.read svc/device.write')).access_token;
  }, 60_000);
  afterAll(async () => d?.cleanup());

  const slotAt = () => {
    const t = Math.ceil((Date.now() + 3_600_000) / Q) * Q;
    return `${iso(t)}/${iso(t + Q)}`;
  };
  const put = async (raw: string) => {
    const res = await fetch(`${d.url}/api/v1/devices/inverter/plan`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as { code?: string; message?: string; slots?: unknown[] } };
  };

  const BAD: [string, string, string][] = [
    ['powerW "Infinity"', `"mode":"charge","powerW":"Infinity"`, 'powerW'],
    ['powerW "-Infinity"', `"mode":"discharge","powerW":"-Infinity"`, 'powerW'],
    ['powerW true', `"mode":"charge","powerW":true`, 'powerW'],
    ['powerW "2000"', `"mode":"charge","powerW":"2000"`, 'powerW'],
    ['powerW 1e999', `"mode":"charge","powerW":1e999`, 'powerW'],
    ['powerW null', `"mode":"charge","powerW":null`, 'powerW'],
    ['targetSoc "Infinity"', `"mode":"charge","powerW":2000,"targetSoc":"Infinity"`, 'targetSoc'],
    ['targetSoc false', `"mode":"charge","powerW":2000,"targetSoc":false`, 'targetSoc'],
    ['targetSoc "50"', `"mode":"charge","powerW":2000,"targetSoc":"50"`, 'targetSoc'],
    ['mode 1', `"mode":1`, 'mode'],
  ];
  for (const [what, fields, field] of BAD)
    it(`PUT plan with ${what}: a named 400 that names slots[1].${field}, nothing stored`, async () => {
      const good = `{"interval":"${slotAt()}","mode":"hold"}`;
      const t = Date.parse(slotAt().split('/')[1]!);
      const r = await put(`{"slots":[${good},{"interval":"${iso(t)}/${iso(t + Q)}",${fields}}]}`);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toMatch(/^(SLOT_INVALID|INVALID_PARAMETER|POWER_REQUIRED)$/);
      expect(r.body.message).toContain(`slots[1].${field}`);
      const g = await getJson(`${d.url}/api/v1/devices/inverter/plan`, token);
      expect(g.status).toBeLessThan(500);
      expect(JSON.stringify(g.body)).not.toMatch(/null|Infinity|"powerW":1\b/);
    });

  it('a good plan is still stored, then GET answers it', async () => {
    const r = await put(`{"slots":[{"interval":"${slotAt()}","mode":"charge","powerW":2000,"targetSoc":80}]}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const g = await getJson(`${d.url}/api/v1/devices/inverter/plan`, token);
    expect(g.body.slots[0]).toMatchObject({ mode: 'charge', powerW: 2000, targetSoc: 80 });
    await fetch(`${d.url}/api/v1/devices/inverter/plan`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
  });

  for (const value of ['"Infinity"', 'true', '"30"', '1e999', 'null'])
    it(`PATCH reserveSoc ${value}: a named 400, the reserve unchanged`, async () => {
      const before = (await getJson(`${d.url}/api/v1/devices/inverter`, owner)).body.reserveSoc;
      const res = await fetch(`${d.url}/api/v1/devices/inverter`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
        body: `{"reserveSoc":${value}}`,
      });
      const body = (await res.json()) as { code: string; message: string };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.code).toMatch(/^(RESERVE_INVALID|INVALID_PARAMETER)$/);
      expect(body.message).toContain('reserveSoc');
      expect((await getJson(`${d.url}/api/v1/devices/inverter`, owner)).body.reserveSoc).toBe(before);
    });

  it('the MQTT plan command refuses the same values by the same check', () => {
    const { control } = demoControl({ start: Date.now() });
    for (const [, fields, field] of BAD) {
      const payload = `{"requestId":"r","deviceId":"inverter","slots":[{"interval":"${slotAt()}",${fields}}]}`;
      const r = answerPlanCommand(control, Buffer.from(payload));
      expect(r, fields).toMatchObject({ status: 'error', code: 'SLOT_INVALID' });
      if (r.status === 'error') expect(r.message).toContain(field);
    }
  });
});
