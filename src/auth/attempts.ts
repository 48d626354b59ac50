/**
 * The one way a secret is checked for a request: reserve the attempt on the failure limits
 * (rate-limit.ts), hash through the bounded gate (hash-gate.ts), settle. Every call site (the
 * token endpoint's client secret and grant, the consent page, the status page's login) goes
 * through `guarded`, so none can check before it reserves or forget to count a failure.
 */
import type { AuthContext } from './context.js';
import { GateBusy } from './hash-gate.js';
import { ownerIsSet, verifyOwner } from './owner.js';
import { type Attempt, OWNER_IDENTITY, Refused, type Subject } from './rate-limit.js';

export type Hashing = <R>(work: () => Promise<R>) => Promise<R>;

/**
 * Runs `check` on a reserved attempt, or returns the refusal without running it. `check` calls
 * attempt.succeed() or attempt.fail(); whatever it leaves unsettled (an error, a request that was
 * not a guess) is released and does not count.
 */
export async function guarded<T>(
  ctx: AuthContext,
  who: Subject,
  check: (attempt: Attempt, hash: Hashing) => Promise<T>,
): Promise<T | Refused> {
  const attempt = ctx.limiter.reserve(who);
  if (attempt instanceof Refused) return attempt;
  try {
    return await check(attempt, (work) => ctx.hashGate.run(who.address, work));
  } catch (e) {
    if (e instanceof GateBusy) {
      ctx.log.warn({ address: who.address }, 'secret checks are queued to the limit; request refused');
      return new Refused(e.retryAfter, 'busy');
    }
    throw e;
  } finally {
    attempt.release();
  }
}

export type OwnerCheck =
  | { kind: 'ok' }
  | { kind: 'failed' }
  | { kind: 'no-owner' }
  | { kind: 'rate-limited'; retryAfter: number; reason: Refused['reason'] };

/** The owner's user name and password, for the consent page and the status page alike. */
export async function checkOwner(
  ctx: AuthContext,
  username: string,
  password: string,
  address: string,
  where: string,
): Promise<OwnerCheck> {
  if (!ownerIsSet(ctx.db)) return { kind: 'no-owner' };
  const r = await guarded(ctx, { identity: OWNER_IDENTITY, address }, async (attempt, hash) => {
    if (await hash(() => verifyOwner(ctx.db, username, password))) {
      attempt.succeed();
      return true;
    }
    attempt.fail();
    ctx.log.warn({ address }, `${where}: wrong owner user name or password`);
    return false;
  });
  if (r instanceof Refused) return { kind: 'rate-limited', retryAfter: r.retryAfter, reason: r.reason };
  return { kind: r ? 'ok' : 'failed' };
}

/** The page text of a refusal. */
export function refusalText(r: { retryAfter: number; reason: Refused['reason'] }): string {
  return r.reason === 'busy'
    ? `The gateway is busy checking other sign-ins. Try again in ${r.retryAfter} seconds.`
    : `Too many failed attempts. Try again in ${r.retryAfter} seconds.`;
}
