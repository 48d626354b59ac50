/**
 * Every field of the tariff bodies and every query parameter of the tariff and savings routes,
 * wrong in each way a client can get it wrong: a 4xx with the error body naming the field,
 * never a 500, and nothing stored changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAT, siteConfig } from './fixture.js';
import { type TariffApi, tariffApi } from './http.js';

const NOW = Date.parse('2026-11-23T12:07:00Z');
const META = { name: 'Day-ahead', currency: 'EUR', timezone: 'Europe/Berlin', kind: 'both' };
const VALUE = { interval: '2026-11-23T10:00:00Z/PT1H', importPrice: 0.3, exportPrice: 0.05 };

interface Case {
  what: string;
  /** a JSON value, or a raw string sent as the body as it is */
  body: unknown;
  code: string;
  /** the field the message must name */
  names: RegExp;
}

const post = (body: Record<string, unknown>): unknown => ({ ...META, ...body });
const without = (key: string, obj: Record<string, unknown> = META) =>
  Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key));
const withValue = (v: Record<string, unknown>, kind = 'both') => post({ kind, values: [v] });

const POST_CASES: Case[] = [
  { what: 'JSON null', body: 'null', code: 'INVALID_BODY', names: /body must be a JSON object/ },
  { what: 'a list', body: '[]', code: 'INVALID_BODY', names: /body must be a JSON object/ },
  { what: 'a string', body: '"tariff"', code: 'INVALID_BODY', names: /body must be a JSON object/ },
  {
    what: 'an unknown field',
    body: post({ owner: 'x' }),
    code: 'INVALID_BODY',
    names: /^owner is not a field here; allowed: name, currency/,
  },
  { what: 'no name', body: without('name'), code: 'INVALID_BODY', names: /^name is required/ },
  {
    what: 'an empty name',
    body: post({ name: '  ' }),
    code: 'INVALID_BODY',
    names: /^name must be 1 to 200 characters/,
  },
  { what: 'a long name', body: post({ name: 'n'.repeat(201) }), code: 'INVALID_BODY', names: /^name must be 1 to 200/ },
  { what: 'a number as name', body: post({ name: 5 }), code: 'INVALID_BODY', names: /^name must be a string, got 5/ },
  { what: 'null as name', body: post({ name: null }), code: 'INVALID_BODY', names: /^name must be a string, got null/ },
  {
    what: 'no currency',
    body: without('currency'),
    code: 'INVALID_BODY',
    names: /^currency is required; a three-letter ISO 4217/,
  },
  {
    what: 'a lowercase currency',
    body: post({ currency: 'eur' }),
    code: 'INVALID_BODY',
    names: /^currency "eur" is not an ISO 4217 currency code; write "EUR"/,
  },
  {
    what: 'an unknown currency',
    body: post({ currency: 'EURO' }),
    code: 'INVALID_BODY',
    names: /^currency "EURO" is not an ISO 4217/,
  },
  { what: 'a currency symbol', body: post({ currency: '€' }), code: 'INVALID_BODY', names: /^currency/ },
  {
    what: 'a number as currency',
    body: post({ currency: 978 }),
    code: 'INVALID_BODY',
    names: /^currency must be a string/,
  },
  {
    what: 'no timezone',
    body: without('timezone'),
    code: 'INVALID_BODY',
    names: /^timezone is required; an IANA time zone/,
  },
  {
    what: 'an unknown zone',
    body: post({ timezone: 'Mars/Olympus' }),
    code: 'INVALID_BODY',
    names: /^timezone "Mars\/Olympus" is not an IANA/,
  },
  {
    what: 'an offset as zone',
    body: post({ timezone: '+01:00' }),
    code: 'INVALID_BODY',
    names: /^timezone "\+01:00" is not an IANA/,
  },
  {
    what: 'a list as zone',
    body: post({ timezone: ['UTC'] }),
    code: 'INVALID_BODY',
    names: /^timezone must be a string, got a list/,
  },
  {
    what: 'no kind',
    body: without('kind'),
    code: 'INVALID_BODY',
    names: /^kind is required; one of import, export, both/,
  },
  {
    what: 'an unknown kind',
    body: post({ kind: 'imports' }),
    code: 'INVALID_BODY',
    names: /^kind "imports" is not a tariff kind/,
  },
  { what: 'values not a list', body: post({ values: {} }), code: 'INVALID_BODY', names: /^values must be a list/ },
  {
    what: 'too many values',
    body: post({ values: Array.from({ length: 5001 }, () => VALUE) }),
    code: 'INVALID_BODY',
    names: /^values holds 5001 entries, at most 5000/,
  },
  {
    what: 'a value that is a number',
    body: post({ values: [1] }),
    code: 'INVALID_BODY',
    names: /^values\[0\] must be an object/,
  },
  {
    what: 'a value that is null',
    body: post({ values: [VALUE, null] }),
    code: 'INVALID_BODY',
    names: /^values\[1\] must be an object/,
  },
  {
    what: 'an unknown value field',
    body: withValue({ ...VALUE, price: 1 }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.price is not a field here/,
  },
  {
    what: 'no interval',
    body: withValue(without('interval', VALUE)),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval is required/,
  },
  {
    what: 'a number as interval',
    body: withValue({ ...VALUE, interval: 1 }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval must be a string/,
  },
  {
    what: 'an unreadable interval',
    body: withValue({ ...VALUE, interval: 'tomorrow' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval is not usable: interval "tomorrow" has no "\/"/,
  },
  {
    what: 'an interval without zone',
    body: withValue({ ...VALUE, interval: '2026-11-23T10:00:00/PT1H' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval is not usable: .*no UTC offset/,
  },
  {
    what: 'an interval ending before it starts',
    body: withValue({ ...VALUE, interval: '2026-11-23T10:00:00Z/2026-11-23T09:00:00Z' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval .*ends before it starts/,
  },
  {
    what: 'an interval off the quarter hour',
    body: withValue({ ...VALUE, interval: '2026-11-23T10:05:00Z/PT15M' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval .*does not start and end on a quarter hour/,
  },
  {
    what: 'an interval shorter than a quarter hour',
    body: withValue({ ...VALUE, interval: '2026-11-23T10:00:00Z/PT10M' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval .*quarter hour/,
  },
  {
    what: 'an interval longer than 7 days',
    body: withValue({ ...VALUE, interval: '2026-11-23T10:00:00Z/P8D' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.interval .*longer than 7 days/,
  },
  {
    what: 'no importPrice (kind both)',
    body: withValue(without('importPrice', VALUE)),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice is required: the tariff's kind is both/,
  },
  {
    what: 'no exportPrice (kind both)',
    body: withValue(without('exportPrice', VALUE)),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.exportPrice is required/,
  },
  {
    what: 'a price in quotes',
    body: withValue({ ...VALUE, importPrice: '0.3' }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice must be a finite number .*got "0.3"/,
  },
  {
    what: 'null as price',
    body: withValue({ ...VALUE, exportPrice: null }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.exportPrice must be a finite number .*got null/,
  },
  {
    what: 'true as price',
    body: withValue({ ...VALUE, importPrice: true }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice must be/,
  },
  {
    what: 'an absurd price',
    body: withValue({ ...VALUE, importPrice: 2e6 }),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice must be .*got 2000000/,
  },
  // JSON.parse reads 1e999 as Infinity
  {
    what: 'an infinite price',
    body: JSON.stringify(META).replace(
      /}$/,
      `,"values":[{"interval":"${VALUE.interval}","importPrice":1e999,"exportPrice":0}]}`,
    ),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice must be .*got Infinity/,
  },
  {
    what: 'an export price on an import tariff',
    body: withValue(VALUE, 'import'),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.exportPrice is not allowed: the tariff's kind is import/,
  },
  {
    what: 'an import price on an export tariff',
    body: withValue(VALUE, 'export'),
    code: 'INVALID_BODY',
    names: /^values\[0\]\.importPrice is not allowed: the tariff's kind is export/,
  },
  {
    what: 'two values that overlap',
    body: post({
      values: [
        VALUE,
        { ...VALUE, interval: '2026-11-23T12:00:00Z/PT1H' },
        { ...VALUE, interval: '2026-11-23T10:45:00Z/PT30M' },
      ],
    }),
    code: 'OVERLAPPING_VALUES',
    names:
      /^values\[0\] \(2026-11-23T10:00:00Z\/2026-11-23T11:00:00Z\) and values\[2\] \(2026-11-23T10:45:00Z\/2026-11-23T11:15:00Z\) overlap/,
  },
];

describe('tariff and savings input', () => {
  let api: TariffApi;
  let tariffId: string;
  let stored: unknown;

  const send = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
    api.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${api.tokens.writer}`, 'content-type': 'application/json' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const page = async () =>
    (await api.req('GET', `/api/v1/dynamicTariffs/${tariffId}?interval=2026-11-23T00:00:00Z/P1D`)).json();

  function expectError(r: { statusCode: number; json(): any }, status: number, code: string, message: RegExp): void {
    expect(r.statusCode).toBe(status);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
    expect(body.statusCode).toBe(status);
    expect(body.code).toBe(code);
    expect(body.message).toMatch(message);
  }

  beforeAll(async () => {
    api = await tariffApi(siteConfig(FLAT), NOW);
    const r = await send('POST', '/api/v1/dynamicTariffs', post({ values: [VALUE] }));
    expect(r.statusCode).toBe(201);
    tariffId = r.json().tariffId;
    stored = await page();
  });
  afterAll(async () => api?.close());

  it.each(POST_CASES)('POST with $what: 400 naming the field', async ({ body, code, names }) => {
    expectError(await send('POST', '/api/v1/dynamicTariffs', body), 400, code, names);
  });

  it('POST bodies that are not JSON: a 4xx with the error body', async () => {
    for (const [payload, type, status] of [
      ['{"name":', 'application/json', 400],
      ['', 'application/json', 400],
      ['{"__proto__":{"x":1}}', 'application/json', 400],
      ['name=x', 'text/plain', 400],
      ['<tariff/>', 'application/xml', 415],
    ] as const) {
      const r = await api.app.inject({
        method: 'POST',
        url: '/api/v1/dynamicTariffs',
        headers: { authorization: `Bearer ${api.tokens.writer}`, 'content-type': type },
        payload,
      });
      expect(r.statusCode, payload).toBe(status);
      expect(Object.keys(r.json()).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
    }
  });

  it('nothing was created by a refused POST', async () => {
    // a refused POST with a valid shape would have made a new tariff; the first one is the only one reachable
    const r = await send('POST', '/api/v1/dynamicTariffs', post({ values: [{ ...VALUE, importPrice: 'x' }] }));
    expect(r.statusCode).toBe(400);
    expect(api.db.prepare('SELECT COUNT(*) FROM tariffs').pluck().get()).toBe(1);
  });

  it.each([
    { what: 'no values', body: {}, code: 'INVALID_BODY', names: /^values is required/ },
    { what: 'empty values', body: { values: [] }, code: 'INVALID_BODY', names: /^values is empty/ },
    {
      what: 'metadata in a PATCH',
      body: { name: 'x', values: [VALUE] },
      code: 'INVALID_BODY',
      names: /^name is not a field here; allowed: values/,
    },
    {
      what: 'a bad price',
      body: { values: [VALUE, { ...VALUE, interval: '2026-11-23T11:00:00Z/PT1H', exportPrice: 'free' }] },
      code: 'INVALID_BODY',
      names: /^values\[1\]\.exportPrice/,
    },
    {
      what: 'a value cutting into a stored one',
      body: { values: [{ ...VALUE, interval: '2026-11-23T10:30:00Z/PT1H' }] },
      code: 'OVERLAPPING_VALUES',
      names:
        /^values\[0\] \(2026-11-23T10:30:00Z\/2026-11-23T11:30:00Z\) overlaps the stored value 2026-11-23T10:00:00Z\/2026-11-23T11:00:00Z/,
    },
    {
      what: 'quarter hours covering only part of a stored hour',
      body: { values: ['10:00', '10:15', '10:45'].map((t) => ({ ...VALUE, interval: `2026-11-23T${t}:00Z/PT15M` })) },
      code: 'OVERLAPPING_VALUES',
      names:
        /overlaps the stored value 2026-11-23T10:00:00Z\/2026-11-23T11:00:00Z without the request covering all of it/,
    },
  ])('PATCH with $what: 400 naming the field', async ({ body, code, names }) => {
    expectError(await send('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, body), 400, code, names);
  });

  it('refused requests left the stored values as they were', async () => {
    expect(await page()).toEqual(stored);
  });

  it('PATCH replaces a stored value by one of the same interval, or by values covering it whole', async () => {
    const same = await send('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, {
      values: [{ ...VALUE, importPrice: 0.31 }],
    });
    expect(same.json()).toEqual({ tariffId, inserted: 1, replaced: 1 });
    const quarters = ['10:00', '10:15', '10:30', '10:45'].map((t, i) => ({
      interval: `2026-11-23T${t}:00Z/PT15M`,
      importPrice: 0.3 + i / 100,
      exportPrice: 0.05,
    }));
    const split = await send('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, { values: quarters });
    expect(split.json()).toEqual({ tariffId, inserted: 4, replaced: 1 });
    const after = (await page()).values;
    expect(after.map((v: { interval: string }) => v.interval)).toEqual(
      quarters
        .map((q) => q.interval.replace(/\/PT15M$/, ''))
        .map((s) => `${s}/${new Date(Date.parse(s) + 900_000).toISOString().replace('.000Z', 'Z')}`),
    );
    // and back to one hour over the four quarters
    const merged = await send('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, { values: [VALUE] });
    expect(merged.json()).toEqual({ tariffId, inserted: 1, replaced: 4 });
    expect(await page()).toEqual(stored);
  });

  it.each([
    { q: 'interval=yesterday', code: 'INVALID_INTERVAL', names: /interval "yesterday"/ },
    {
      q: 'interval=2026-11-23T10:00:00Z/2026-11-22T10:00:00Z',
      code: 'INVALID_INTERVAL',
      names: /ends before it starts/,
    },
    { q: 'interval=2026-11-23T10:00:00 01:00/P1D', code: 'INVALID_INTERVAL', names: /encode "\+" as %2B/ },
    { q: 'interval=2020-01-01T00:00:00Z/2026-01-01T00:00:00Z', code: 'INTERVAL_TOO_LONG', names: /at most 400 days/ },
    { q: 'interval=', code: 'INVALID_INTERVAL', names: /interval is empty/ },
    { q: 'nextToken=not-a-token', code: 'INVALID_NEXT_TOKEN', names: /^nextToken is not a token of this gateway/ },
  ])('GET tariff with $q: 400', async ({ q, code, names }) => {
    expectError(await api.req('GET', `/api/v1/dynamicTariffs/${tariffId}?${q}`), 400, code, names);
  });

  it.each([
    { q: 'resolution=PT1H', code: 'MISSING_PARAMETER', names: /'interval' is required/ },
    {
      q: 'interval=2026-11-23T00:00:00Z/P1D',
      code: 'MISSING_PARAMETER',
      names: /'resolution' is required; allowed: PT15M, PT1H, P1D, P1M/,
    },
    {
      q: 'interval=2026-11-23T00:00:00Z/P1D&resolution=',
      code: 'INVALID_RESOLUTION',
      names: /resolution is empty; allowed: PT15M, PT1H, P1D, P1M/,
    },
    {
      q: 'interval=2026-11-23T00:00:00Z/P1D&resolution=P1Y',
      code: 'INVALID_RESOLUTION',
      names: /"P1Y" is not supported; allowed: PT15M, PT1H, P1D, P1M/,
    },
    { q: 'interval=2026-11-23T00:00:00Z/P1D&resolution=PT30M', code: 'INVALID_RESOLUTION', names: /"PT30M"/ },
    { q: 'interval=2026-11-23/P1D&resolution=P1D', code: 'INVALID_INTERVAL', names: /no UTC offset/ },
    { q: 'interval=P1D/P2D&resolution=P1D', code: 'INVALID_INTERVAL', names: /cannot be parsed/ },
    {
      q: 'interval=2020-01-01T00:00:00Z/2026-01-01T00:00:00Z&resolution=P1M',
      code: 'INTERVAL_TOO_LONG',
      names: /400 days/,
    },
  ])('GET savings with $q: 400', async ({ q, code, names }) => {
    expectError(await api.req('GET', `/api/v2/sites/home/savings?${q}`), 400, code, names);
  });

  it('GET savings of another site: 404 with the site body; P1M is accepted, PT60M is not one of the listed values', async () => {
    expectError(
      await api.req('GET', '/api/v2/sites/elsewhere/savings?interval=2026-11-23T00:00:00Z/P1D&resolution=P1D'),
      404,
      'SITE_NOT_FOUND',
      /elsewhere/,
    );
    expect(
      (await api.req('GET', '/api/v2/sites/home/savings?interval=2026-11-01T00:00:00%2B01:00/P1M&resolution=P1M'))
        .statusCode,
    ).toBe(200);
    // the document and docs/api.md list the values; another spelling of one of them is refused with the list
    expectError(
      await api.req('GET', '/api/v2/sites/home/savings?interval=2026-11-23T00:00:00Z/P1D&resolution=PT60M'),
      400,
      'INVALID_RESOLUTION',
      /allowed: PT15M, PT1H, P1D, P1M/,
    );
  });
});
