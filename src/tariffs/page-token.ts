/**
 * `nextToken` of the dynamic tariff GET (docs/design.md: opaque, tamper-evident, 400 when invalid).
 * The token is the page cursor and the tariff id it belongs to, signed with HMAC-SHA256
 * (RFC 2104) under a key kept in the database: a client can carry it but neither forge a
 * cursor nor move a token to another tariff. Clients must not read it; its form may change.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { apiError } from '../core/errors.js';
import type { PageCursor } from './pages.js';

const VERSION = 1;
/** binds the MAC to this use, should the key ever sign anything else */
const CONTEXT = 'sitegw/tariff-page\n';
const B64URL = /^[A-Za-z0-9_-]+$/;
export const MAX_TOKEN_LENGTH = 512;

interface Payload {
  v: number;
  /** tariff id */
  t: string;
  /** the next page ends here, ms */
  e: number;
  /** pages stop at this time (interval.start), ms; null = the stored history */
  f: number | null;
}

const mac = (key: Buffer, payload: string) =>
  createHmac('sha256', key)
    .update(CONTEXT + payload)
    .digest();

export function signPageToken(key: Buffer, tariffId: string, cursor: PageCursor): string {
  const body: Payload = { v: VERSION, t: tariffId, e: cursor.end, f: cursor.floor };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

const invalid = (why: string) =>
  apiError(
    'INVALID_NEXT_TOKEN',
    `nextToken ${why}; pass the nextToken of the previous page unchanged, or leave it out to start again`,
  );

function isPayload(p: unknown): p is Payload {
  if (p === null || typeof p !== 'object') return false;
  const o = p as Record<string, unknown>;
  return (
    o.v === VERSION &&
    typeof o.t === 'string' &&
    Number.isSafeInteger(o.e) &&
    (o.f === null || Number.isSafeInteger(o.f))
  );
}

/** The cursor a token carries; 400 INVALID_NEXT_TOKEN when it was altered, made up, or issued for another tariff. */
export function readPageToken(key: Buffer, tariffId: string, token: string): PageCursor {
  if (token.length > MAX_TOKEN_LENGTH) throw invalid('is too long to be a token of this gateway');
  const parts = token.split('.');
  if (parts.length !== 2 || !B64URL.test(parts[0]!) || !B64URL.test(parts[1]!))
    throw invalid('is not a token of this gateway');
  const [payload, sig] = parts as [string, string];
  const given = Buffer.from(sig, 'base64url');
  const want = mac(key, payload);
  if (given.length !== want.length || !timingSafeEqual(given, want))
    throw invalid('was altered or was not issued by this gateway');
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a token of this gateway');
  }
  // a signed payload of another shape comes from another version of this code
  if (!isPayload(body)) throw invalid('comes from another version of sitegw');
  if (body.t !== tariffId) throw invalid('belongs to another tariff');
  return { end: body.e, floor: body.f };
}
