/**
 * Registering clients, as the installer does with `sitegw clients ...` and the demo does for its
 * own client. The secret is returned once and only its hash is stored.
 */
import type { Database } from 'better-sqlite3';
import {
  type ClientRow,
  clientIdTaken,
  findClient,
  insertClient,
  listClients,
  markClientRemoved,
  setClientDevices,
  setClientSecretHash,
} from '../store/clients.js';
import { writeTx } from '../store/db.js';
import { type PublishAudit, removeClientFromPublishTo } from '../store/publish-to.js';
import { revokeClientTokens } from '../store/tokens.js';
import { parseScopeList, ScopeError, wireScope } from './scopes.js';
import { hashSecret, randomSecret, type SecretStrength } from './secrets.js';

export type { ClientRow } from '../store/clients.js';

/** Client ids travel in HTTP Basic (no ':'), in URLs and in publishTo lists. */
export const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const SECRET_PREFIX = 'sgw_cs_';

export class ClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientError';
  }
}

export interface NewClient {
  id: string;
  name?: string;
  /** wire or bare spelling; default svc/device.read */
  scopes?: readonly string[];
  redirectUris?: readonly string[];
  devices?: readonly string[];
  /** no secret: only the authorization-code flow with PKCE (a mobile or browser app) */
  public?: boolean;
}

/**
 * A redirect URI is compared by exact string (RFC 9700 §2.1): no fragment (RFC 6749 §3.1.2), no
 * credentials in it. https anywhere, http (a LAN app or a loopback redirect of RFC 8252 §7.3),
 * or an app's private-use scheme with a dot in it (RFC 8252 §7.1).
 */
export function checkRedirectUri(uri: string): string {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new ClientError(
      `redirect URI '${uri}' is not an absolute URL; write it in full, e.g. https://app.example.com/callback`,
    );
  }
  if (uri.includes('#')) throw new ClientError(`redirect URI '${uri}' has a fragment (#...); leave it out`);
  if (u.username || u.password) throw new ClientError(`redirect URI '${uri}' carries credentials; leave them out`);
  const scheme = u.protocol.slice(0, -1);
  if (scheme !== 'https' && scheme !== 'http' && !scheme.includes('.')) {
    throw new ClientError(
      `redirect URI '${uri}': use https://, http:// or an app scheme in reverse-domain form such as com.example.app:/callback`,
    );
  }
  if (uri.length > 2000) throw new ClientError('redirect URI is longer than 2000 characters');
  return uri;
}

function checkScopes(scopes: readonly string[] | undefined): string[] {
  if (!scopes || scopes.length === 0) return [wireScope('device.read')];
  try {
    return parseScopeList(scopes);
  } catch (e) {
    if (e instanceof ScopeError) throw new ClientError(e.message);
    throw e;
  }
}

function checkDevices(devices: readonly string[] | undefined, known: ReadonlySet<string> | undefined): string[] {
  const list = [...new Set(devices ?? [])];
  if (known) {
    const unknown = list.filter((d) => !known.has(d));
    if (unknown.length > 0)
      throw new ClientError(`unknown device '${unknown[0]}'; devices of this site: ${[...known].join(', ')}`);
  }
  return list;
}

/** Registers a client; returns the secret to show once (null for a public client). */
export async function addClient(
  db: Database,
  spec: NewClient,
  now: number,
  knownDevices?: ReadonlySet<string>,
  strength: SecretStrength = 'stored',
): Promise<{ client: ClientRow; secret: string | null }> {
  if (!CLIENT_ID.test(spec.id))
    throw new ClientError(
      `client id '${spec.id}': use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  if (clientIdTaken(db, spec.id))
    throw new ClientError(`client id '${spec.id}' is taken (ids of removed clients are not reused); choose another`);
  const redirectUris = [...new Set((spec.redirectUris ?? []).map(checkRedirectUri))];
  if (spec.public && redirectUris.length === 0)
    throw new ClientError(
      'a public client needs at least one redirect URI: it can only use the authorization-code flow',
    );
  const scopes = checkScopes(spec.scopes);
  const devices = checkDevices(spec.devices, knownDevices);
  const secret = spec.public ? null : randomSecret(SECRET_PREFIX);
  const name = (spec.name ?? spec.id).trim().slice(0, 200) || spec.id;
  insertClient(
    db,
    {
      id: spec.id,
      name,
      secretHash: secret ? await hashSecret(secret, strength) : null,
      scopes,
      redirectUris,
      devices,
    },
    now,
  );
  return { client: findClient(db, spec.id)!, secret };
}

/**
 * Issues a new secret. Everything issued to the client so far is revoked with the old secret:
 * a rotation usually means the old one may be known to someone else.
 */
export async function rotateClientSecret(
  db: Database,
  id: string,
  now: number,
  strength: SecretStrength = 'stored',
): Promise<string> {
  const client = findClient(db, id);
  if (!client) throw new ClientError(`no client '${id}'`);
  if (client.secretHash === null) throw new ClientError(`client '${id}' is public: it has no secret to rotate`);
  const secret = randomSecret(SECRET_PREFIX);
  setClientSecretHash(db, id, await hashSecret(secret, strength));
  revokeClientTokens(db, id, now);
  return secret;
}

/** Removes a client: its tokens stop working at once and it leaves every publishTo list (audited). */
export function removeClient(
  db: Database,
  id: string,
  now: number,
): { revokedTokens: number; publishChanges: PublishAudit[] } {
  return writeTx(db, () => {
    if (!markClientRemoved(db, id, now)) throw new ClientError(`no client '${id}'`);
    const revokedTokens = revokeClientTokens(db, id, now);
    const publishChanges = removeClientFromPublishTo(db, id, 'installer', now);
    return { revokedTokens, publishChanges };
  });
}

/** Replaces the devices a partner client sees. */
export function assignDevices(
  db: Database,
  id: string,
  devices: readonly string[],
  knownDevices?: ReadonlySet<string>,
): ClientRow {
  if (!findClient(db, id)) throw new ClientError(`no client '${id}'`);
  setClientDevices(db, id, checkDevices(devices, knownDevices));
  return findClient(db, id)!;
}

export { findClient, listClients };
