/**
 * The key that signs dynamic tariff page tokens is read before it is written: a paged GET, a read,
 * works on a data disk that takes no writes (docs/design.md "Field faults: what the numbers
 * survive"). `query_only` makes every write fail with SQLITE_READONLY, a storage fault, as a full
 * disk's SQLITE_FULL is; a second connection has no key cached.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { isStorageFault } from '../../src/store/storage-faults.js';
import { pageTokenKey } from '../../src/store/tariffs.js';

const dir = mkdtempSync(join(tmpdir(), 'sitegw-page-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the page token key on a disk that refuses writes', () => {
  it('is the stored one, read without a write; only a first key ever needs the disk', () => {
    const file = join(dir, 'sitegw.db');
    const first = openDatabase(file);
    const key = pageTokenKey(first);
    expect(key).toHaveLength(32);
    first.close();

    const again = openDatabase(file);
    again.pragma('query_only = ON');
    expect(pageTokenKey(again).equals(key)).toBe(true);
    again.close();

    const fresh = openDatabase(join(dir, 'fresh.db'));
    fresh.pragma('query_only = ON');
    let err: unknown;
    try {
      pageTokenKey(fresh);
    } catch (e) {
      err = e;
    }
    // the API answers it 503 STORAGE_UNAVAILABLE: a storage fault, not a bug
    expect(isStorageFault(err)).toBe(true);
    fresh.close();
  });
});
