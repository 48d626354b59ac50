/** The site owner's login for the consent page: `sitegw owner set-password`. */
import type { Database } from 'better-sqlite3';
import { writeTx } from '../store/db.js';
import { getOwner, putOwner } from '../store/owner.js';
import { revokeCustomerTokens } from '../store/tokens.js';
import { ClientError } from './clients.js';
import { hashSecret, type SecretStrength, safeEqual, verifySecret } from './secrets.js';

export const OWNER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** NIST SP 800-63B §5.1.1: at least 8 characters, any characters allowed, a sane upper bound. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/**
 * Sets the owner's user name and password. Every customer token issued on the old password is
 * revoked: a new password is how an owner locks out an app they no longer trust.
 */
export async function setOwnerPassword(
  db: Database,
  username: string,
  password: string,
  now: number,
  strength: SecretStrength = 'stored',
): Promise<{ revokedTokens: number }> {
  if (!OWNER_NAME.test(username))
    throw new ClientError(`user name '${username}': use 1 to 64 letters, digits, '.', '_', '@' or '-'`);
  if ([...password].length < PASSWORD_MIN)
    throw new ClientError(`the password needs at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw new ClientError(`the password may have at most ${PASSWORD_MAX} characters`);
  const passwordHash = await hashSecret(password, strength);
  return writeTx(db, () => {
    putOwner(db, { username, passwordHash }, now);
    return { revokedTokens: revokeCustomerTokens(db, now) };
  });
}

export function ownerIsSet(db: Database): boolean {
  return getOwner(db) !== undefined;
}

/** Both checks always run, so a wrong user name takes as long as a wrong password. */
export async function verifyOwner(db: Database, username: string, password: string): Promise<boolean> {
  const owner = getOwner(db);
  const nameOk = owner !== undefined && safeEqual(username, owner.username);
  const passwordOk = await verifySecret(password.slice(0, PASSWORD_MAX), owner?.passwordHash);
  return nameOk && passwordOk;
}
