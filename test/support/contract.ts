import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { PAYLOAD_VERSION } from '../../src/uplink/topics.js';
import type { Collector } from './mqtt-brokers.js';

/** docs/asyncapi.yaml, the uplink contract as data. */
export const ASYNCAPI_FILE = new URL('../../docs/asyncapi.yaml', import.meta.url);

interface Doc {
  info: { version: string; 'x-payload-version': number };
  channels: Record<string, { address: string; messages: Record<string, { $ref: string }> }>;
}

export interface Contract {
  doc: Doc;
  /** the channel a topic below `prefix` belongs to, or undefined */
  channelOf(topic: string): string | undefined;
  /** errors of `payload` against the channel's message of payload version `v` (default the current one); [] when it conforms */
  check(topic: string, payload: unknown, v?: number): string[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/**
 * Closes every object schema marked `x-lists-every-field` (additionalProperties: false), so a
 * field the gateway sends without it being written down fails the project's own tests; the
 * published schemas stay open as the versioning rule says (docs/asyncapi.yaml info).
 */
function closeListed(node: unknown): void {
  if (Array.isArray(node)) for (const n of node) closeListed(n);
  else if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o['x-lists-every-field'] === true) o.additionalProperties = false;
    for (const v of Object.values(o)) closeListed(v);
  }
}

/** `open`: the schemas as published (a consumer's view); by default closed as above (the gateway's tests). */
export function loadContract(prefix: string, { open = false }: { open?: boolean } = {}): Contract {
  const doc = parse(readFileSync(ASYNCAPI_FILE, 'utf8')) as Doc;
  if (!open) closeListed(doc);
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc as object, 'asyncapi.yaml', undefined, false);
  const routes = Object.entries(doc.channels).map(([name, ch]) => ({
    name,
    re: new RegExp(
      `^${ch.address
        .split(/(\{[a-zA-Z]+\})/)
        .map((part) =>
          part === '{prefix}' ? escapeRegExp(prefix) : part.startsWith('{') ? '[^/]+' : escapeRegExp(part),
        )
        .join('')}$`,
    ),
  }));
  const compiled = new Map<string, ValidateFunction>();
  const validator = (messageKey: string) => {
    let v = compiled.get(messageKey);
    if (!v)
      compiled.set(messageKey, (v = ajv.compile({ $ref: `asyncapi.yaml#/components/messages/${messageKey}/payload` })));
    return v;
  };
  const channelOf = (topic: string) => routes.find((r) => r.re.test(topic))?.name;
  return {
    doc,
    channelOf,
    check(topic, payload, v = PAYLOAD_VERSION) {
      const name = channelOf(topic);
      if (!name) return [`${topic}: no channel of docs/asyncapi.yaml has this topic`];
      const refs = Object.values(doc.channels[name]!.messages).map((m) => m.$ref.split('/').at(-1)!);
      const key = refs.length === 1 ? refs[0]! : refs.find((k) => k.endsWith(`V${v}`));
      if (!key) return [`${topic}: channel ${name} has no message for payload version ${v}`];
      const validate = validator(key);
      if (validate(payload)) return [];
      return (validate.errors ?? []).map(
        (e) => `${topic} (${key}): ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
      );
    },
  };
}

/**
 * Every message a collector got from the gateway conforms to docs/asyncapi.yaml at the current
 * payload version. Commands on cmd/resync are the test's own (some malformed on purpose) and are
 * left out. Returns how many were checked.
 */
export function expectConforming(c: Collector, prefix: string): number {
  const contract = loadContract(prefix);
  // topics outside the prefix (an MQTT 5 response topic of the test's choosing) are checked by the caller
  const fromGateway = c.messages.filter((m) => m.topic.startsWith(`${prefix}/`) && m.topic !== `${prefix}/cmd/resync`);
  const errors = fromGateway.flatMap((m) => {
    let body: unknown;
    try {
      body = JSON.parse(m.payload);
    } catch {
      return [`${m.topic}: not JSON: ${m.payload.slice(0, 80)}`];
    }
    return contract.check(m.topic, body);
  });
  expect(errors, 'messages that do not conform to docs/asyncapi.yaml').toEqual([]);
  expect(fromGateway.length).toBeGreaterThan(0);
  return fromGateway.length;
}
