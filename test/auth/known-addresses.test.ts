/**
 * The addresses where an identity signed in survive a restart (issue 26 finding 4): a limiter
 * made again on the same database, as the daemon makes one at every start, still exempts the
 * owner's usual address from the owner's failed-attempt key that hostile addresses filled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Attempt,
  FailureLimiter,
  IDENTITY_SPREAD,
  KNOWN_ADDRESS_MS,
  type KnownAddressStore,
  OWNER_IDENTITY,
  Refused,
} from '../../src/auth/rate-limit.js';
import { openDatabase } from '../../src/store/db.js';
import { loadKnownAddresses, saveKnownAddress } from '../../src/store/known-addresses.js';

const MAX = 5;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbFile(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-known-'));
  dirs.push(d);
  return join(d, 'sitegw.db');
}

const store = (db: Database): KnownAddressStore => ({
  load: (since) => loadKnownAddresses(db, since),
  save: (who, at, keep, since) => saveKnownAddress(db, { ...who, at }, keep, since),
});

/** the limiter a daemon start makes, on the database file as it is now */
function started(file: string, clock: { now: number }): { limiter: FailureLimiter; db: Database } {
  const db = openDatabase(file);
  return {
    db,
    limiter: new FailureLimiter({ maxFailures: MAX, windowMs: 300_000, now: () => clock.now, known: store(db) }),
  };
}

const reserved = (r: Attempt | Refused): Attempt => {
  if (r instanceof Refused) throw new Error(`refused for ${r.retryAfter} s`);
  return r;
};
const owner = (address: string) => ({ identity: OWNER_IDENTITY, address });

describe('known sign-in addresses across a restart', () => {
  it("the owner's usual address still gets in after a restart while other addresses filled the owner's key", () => {
    const file = dbFile();
    const clock = { now: 1_000_000 };
    const first = started(file, clock);
    reserved(first.limiter.reserve(owner('192.168.1.20'))).succeed();
    first.db.close();

    // the crash: a new process, a new limiter, the same database
    const second = started(file, clock);
    for (let i = 0; i < MAX * IDENTITY_SPREAD; i++) reserved(second.limiter.reserve(owner(`10.0.0.${i % 4}`))).fail();
    expect(second.limiter.reserve(owner('10.0.0.99'))).toBeInstanceOf(Refused);
    reserved(second.limiter.reserve(owner('192.168.1.20'))).succeed();
    second.db.close();
  });

  it('an address older than the known period is forgotten, and an identity keeps its newest 32', () => {
    const file = dbFile();
    const clock = { now: 1_000_000 };
    const first = started(file, clock);
    for (let i = 0; i < 40; i++) {
      clock.now += 3_600_000;
      reserved(first.limiter.reserve(owner(`192.168.1.${i}`))).succeed();
    }
    expect(loadKnownAddresses(first.db, 0).map((k) => k.address)).toEqual(
      Array.from({ length: 32 }, (_, i) => `192.168.1.${i + 8}`),
    );
    first.db.close();
    clock.now += KNOWN_ADDRESS_MS - 10 * 3_600_000;
    const second = started(file, clock);
    // what signed in over 30 days ago is not known any more
    expect(loadKnownAddresses(second.db, clock.now - KNOWN_ADDRESS_MS)).toHaveLength(10);
    second.db.close();
  });
});
