/**
 * Property-based requests generated from the served /openapi.json itself (fast-check over the
 * document's parameter and body schemas), sent to the real demo daemon over real HTTP. For every
 * request, valid by the document or not: no 5xx; the status is one the operation documents; the
 * answer's media type is documented and its body validates against the documented schema
 * (openapi-backend). For a request the document calls valid, sent with a token that may call the
 * route, a 400 may only be one of the refusals a schema cannot express (an interval that ends
 * before it starts, overlapping tariff values, …): any other 400 means the document is looser
 * than the server. A route added later is fuzzed without touching this file.
 *
 * Run count: FUZZ_RUNS requests (times SITEGW_FUZZ_SCALE), seed SITEGW_FUZZ_SEED; the summary
 * line names both, and a failure prints fast-check's shrunk counterexample and its seed.
 */
import fc from 'fast-check';
import { type Document, OpenAPIBackend, type Operation } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, ownerToken, partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { capturingLogger } from '../support/uplink.js';
import { SCALE, SEED, Tally } from './gen.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
type Schema = Record<string, any>;

const FUZZ_RUNS = 500;

/**
 * '.' and '..' cannot be sent as a path parameter: every client removes dot segments (RFC 3986
 * 5.2.4; WHATWG URL, which fetch follows, also for %2E), so the server would see another path.
 * Seen at 10,000 requests: a tariffId '.' arrived as an empty one.
 */
const notDotSegment = (v: string) => (v === '.' || v === '..' ? `${v}_` : v);
/** 10:05 on the daemon clock at speed 1: no bucket closes during the run */
const START = Date.UTC(2026, 5, 1, 10, 5, 0);

/**
 * 400 codes a schema cannot express: they depend on the values' meaning (an interval's order and
 * length, what is stored, which clients exist), so a request the document calls valid may get them.
 */
const SEMANTIC_400 = new Set([
  'INVALID_INTERVAL',
  'INTERVAL_TOO_LONG',
  'INVALID_NEXT_TOKEN',
  'OVERLAPPING_VALUES',
  // tariff bodies: quarter hours, a 7-day maximum, an ISO 4217 code, an IANA zone
  'INVALID_BODY',
  'UNKNOWN_CLIENT',
  'UNKNOWN_STREAM',
  'DUPLICATE_CLIENT',
  // a plan path whose device is a meter: which devices are storage systems is the site's, not the document's
  'NOT_A_STORAGE',
  // a reserve outside the site's control.socMin..socMax and the device's own minimum: the site's envelope
  'RESERVE_OUT_OF_RANGE',
]);

interface Generated {
  route: string;
  method: string;
  path: string;
  query: Record<string, string>;
  body?: { media: string; value: unknown };
  token: 'owner' | 'partner' | 'none';
}

/** The document's operations as plain objects. */
const operations = (d: Document) =>
  Object.entries(d.paths as Record<string, Record<string, Schema>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, path, method, op })),
  );

/** fast-check arbitraries from an OpenAPI 3.0 schema: valid values, with the schema's example weighted in. */
function arbitrary(schema: Schema, doc: Document, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
    return arbitrary(schemas[name]!, doc, depth + 1);
  }
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) return fc.oneof(...alts.map((s: Schema) => arbitrary(s, doc, depth)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const example = (a: fc.Arbitrary<unknown>) =>
    schema.example !== undefined ? fc.oneof({ arbitrary: fc.constant(schema.example), weight: 3 }, a) : a;
  const nullable = (a: fc.Arbitrary<unknown>) => (schema.nullable ? fc.option(a, { nil: null }) : a);
  switch (schema.type) {
    case 'string':
      return nullable(
        example(
          schema.pattern
            ? fc.stringMatching(new RegExp(schema.pattern))
            : fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 250) }),
        ),
      );
    case 'integer':
      return nullable(example(fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 })));
    case 'number':
      return nullable(
        example(
          fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true }),
        ),
      );
    case 'boolean':
      return nullable(fc.boolean());
    case 'array':
      return depth > 3
        ? fc.constant([])
        : fc.array(arbitrary(schema.items ?? {}, doc, depth + 1), { maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case 'object':
    case undefined: {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(props).length === 0) return fc.constant({});
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, arbitrary(s, doc, depth + 1)])), {
        requiredKeys: (schema.required ?? []) as string[],
      });
    }
    default:
      return fc.anything();
  }
}

/** A value outside the schema more often than not: junk, an empty string, a long one. */
const junk = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom('', ' ', 'null', '-1', '1e309', 'P', '/', '%', 'PT60M'),
  fc.string({ minLength: 201, maxLength: 260 }),
);

describe('fuzz: requests generated from /openapi.json', () => {
  let demo: Demo;
  let doc: Document;
  let backend: OpenAPIBackend;
  const tokens: Record<string, string> = {};
  /** real values for path parameters, mixed in with the document's generated strings */
  const known: Record<string, string[]> = {};
  const cap = capturingLogger();

  beforeAll(async () => {
    demo = await demoSite({ speed: 1, start: START, history: 'PT6H', log: cap.log });
    doc = (await getJson(`${demo.url}/openapi.json`)).body;
    const withIds = structuredClone(doc);
    for (const o of operations(withIds)) o.op.operationId = o.route;
    backend = new OpenAPIBackend({ definition: withIds, strict: true, validate: true, quick: false });
    await backend.init();
    tokens.owner = await ownerToken(demo.credentials);
    tokens.partner = await partnerToken(demo.credentials);
    const created = await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
      method: 'POST',
      headers: { ...bearer(tokens.owner), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Spot', currency: 'EUR', timezone: 'Europe/Berlin', kind: 'both' }),
    });
    known.siteId = [demo.daemon.site.id];
    known.synthId = [...demo.daemon.site.devices.keys(), ...demo.daemon.site.streams().map((s) => s.id)];
    known.tariffId = [((await created.json()) as { tariffId: string }).tariffId];
  });
  afterAll(async () => demo?.cleanup());

  /** One request of one operation: each parameter and the body from its schema, or junk. */
  const requestOf = (o: ReturnType<typeof operations>[number]): fc.Arbitrary<Generated> => {
    const params = (o.op.parameters ?? []) as { name: string; in: string; required?: boolean; schema: Schema }[];
    const value = (p: { name: string; schema: Schema }) =>
      fc.oneof(
        { arbitrary: arbitrary(p.schema, doc), weight: 6 },
        { arbitrary: known[p.name] ? fc.constantFrom(...known[p.name]!) : arbitrary(p.schema, doc), weight: 6 },
        { arbitrary: junk, weight: 1 },
      );
    const pathArb = fc.record(
      Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, value(p)])) as Record<
        string,
        fc.Arbitrary<unknown>
      >,
    );
    const queryArb = fc.record(
      Object.fromEntries(
        params.filter((p) => p.in === 'query').map((p) => [p.name, fc.option(value(p), { nil: undefined, freq: 4 })]),
      ) as Record<string, fc.Arbitrary<unknown>>,
      // a required parameter is left out now and then
      { requiredKeys: [] },
    );
    const media = Object.keys(o.op.requestBody?.content ?? {});
    const bodyArb =
      media.length === 0
        ? fc.constant(undefined)
        : fc
            .constantFrom(...media)
            .chain((m) =>
              fc
                .oneof(
                  { arbitrary: arbitrary(o.op.requestBody.content[m].schema, doc), weight: 8 },
                  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
                )
                .map((v) => ({ media: m, value: v })),
            );
    return fc
      .record({
        pathValues: pathArb,
        query: queryArb,
        body: bodyArb,
        token: fc.constantFrom<Generated['token']>('owner', 'owner', 'owner', 'partner', 'none'),
      })
      .map(({ pathValues, query, body, token }) => ({
        route: o.route,
        method: o.method.toUpperCase(),
        path: o.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(notDotSegment(String(pathValues[k])))),
        query: Object.fromEntries(
          Object.entries(query)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, String(v)]),
        ),
        ...(body ? { body } : {}),
        token,
      }));
  };

  const encodeBody = (b: NonNullable<Generated['body']>): string => {
    if (b.media.startsWith('application/x-www-form-urlencoded')) {
      const form = b.value && typeof b.value === 'object' && !Array.isArray(b.value) ? b.value : {};
      return new URLSearchParams(Object.entries(form).map(([k, v]) => [k, String(v)])).toString();
    }
    return JSON.stringify(b.value);
  };

  /** Whether the token may call the route at all (its documented scopes): only then is a 400 about the request itself. */
  const mayCall = (op: Operation, token: Generated['token']): boolean => {
    const needs = (op.security ?? []).flatMap((s) => Object.values(s).flat()) as string[];
    if (needs.length === 0) return true;
    if (token === 'none') return false;
    // the demo's partner token holds the read scopes; the owner token every scope
    return token === 'owner' || needs.every((s) => s.endsWith('.read'));
  };

  it(`${FUZZ_RUNS * SCALE} requests: documented statuses, valid answers, no 5xx, no 400 for a request the document calls valid`, async () => {
    const tally = new Tally();
    let validCount = 0;
    const ops = operations(doc);
    const arb = fc.oneof(...ops.map(requestOf));
    await fc.assert(
      fc.asyncProperty(arb, async (g) => {
        const op = backend.getOperation(g.route)!;
        const url = `${demo.url}${g.path}${Object.keys(g.query).length ? `?${new URLSearchParams(g.query)}` : ''}`;
        const headers: Record<string, string> = g.token === 'none' ? {} : bearer(tokens[g.token]!);
        if (g.body) headers['content-type'] = g.body.media;
        const res = await fetch(url, {
          method: g.method,
          headers,
          redirect: 'manual',
          ...(g.body ? { body: encodeBody(g.body) } : {}),
        });
        const text = await res.text();
        const contentType = res.headers.get('content-type') ?? '';
        const what = `${g.method} ${url.replace(demo.url, '')} (${g.token}) ${g.body ? encodeBody(g.body).slice(0, 200) : ''} → ${res.status} ${text.slice(0, 300)}`;
        tally.add(String(res.status));
        expect(res.status, what).toBeLessThan(500);
        const documented = op.responses?.[String(res.status)] as { content?: Record<string, unknown> } | undefined;
        expect(documented, `undocumented status: ${what}`).toBeDefined();
        const media = Object.keys(documented!.content ?? {});
        if (media.length > 0)
          expect(
            media.some((m) => contentType.replace(/\s/g, '').startsWith(m.replace(/\s/g, ''))),
            `${contentType} not documented: ${what}`,
          ).toBe(true);
        const body = contentType.startsWith('application/json') ? JSON.parse(text) : text;
        // 204 has no body (RFC 9110 §15.3.5): nothing to hold against the document's `null`
        if (res.status === 204) expect(text, what).toBe('');
        else expect(backend.validateResponse(body, op, res.status).errors ?? [], what).toEqual([]);
        const valid =
          (
            backend.validateRequest(
              {
                method: g.method,
                path: g.path,
                query: g.query,
                body: g.body?.value,
                headers: { ...headers, ...(g.body ? {} : { 'content-type': 'application/json' }) },
              },
              g.route,
            ).errors ?? []
          ).length === 0;
        if (valid && res.status === 400 && mayCall(op, g.token) && !g.route.includes('/oauth2/'))
          expect(SEMANTIC_400, `the document calls this request valid: ${what}`).toContain(
            (body as { code?: string }).code,
          );
        if (valid) validCount++;
      }),
      { numRuns: FUZZ_RUNS * SCALE, seed: SEED, endOnFailure: true },
    );
    console.log(`${tally.line('requests generated from /openapi.json')}; ${validCount} of them valid by the document`);
    // the daemon logged no failure and is still healthy
    expect(cap.lines().filter((l) => Number(l.level) >= 50)).toEqual([]);
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
  }, 300_000);
});
