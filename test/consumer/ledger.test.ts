/** The consumer's per-site seq ledger and hole handling, on a real SQLite file shared by two stores. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holeInterval, scanGaps } from '../../src/consumer/gaps.js';
import { ConsumerStore, type Incoming } from '../../src/consumer/store.js';

const T = Date.parse('2026-11-01T10:00:00Z');
const state = (n: number): Incoming => ({ kind: 'state', key: 'topology', body: `{"n":${n}}` });
const tele = (start: number, w: number): Incoming => ({
  kind: 'telemetry',
  resync: null,
  entries: [{ deviceId: 'inv', start, interval: 'x/y', deviceKind: 'inverter', entry: JSON.stringify({ power_W: w }) }],
});
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const stores = () => {
  dir = mkdtempSync(join(tmpdir(), 'sitegw-ledger-'));
  const f = join(dir, 'c.db');
  return [new ConsumerStore(f), new ConsumerStore(f)] as const;
};

describe('consumer ledger', () => {
  it('drops a seq seen before, whichever instance saw it, and takes seqs in any order', () => {
    const [a, b] = stores();
    expect(a.accept('s', 'p/s', 5, T, state(5), 0)).toBe(true);
    expect(b.accept('s', 'p/s', 5, T, state(5), 0)).toBe(false);
    expect(b.accept('s', 'p/s', 3, T, state(3), 0)).toBe(true);
    expect(a.accept('s', 'p/s', 4, T, state(4), 0)).toBe(true);
    expect(a.accept('s', 'p/s', 3, T, state(3), 0)).toBe(false);
    expect(a.gaps()).toEqual([]);
    expect(a.siteCounts()).toEqual([{ siteId: 's', messages: 3, duplicates: 2 }]);
    a.close();
    b.close();
  });

  it('keeps the telemetry entry of the highest seq, whatever order they come in', () => {
    const [a, b] = stores();
    a.accept('s', 'p/s', 10, T, tele(T, 2), 0);
    a.accept('s', 'p/s', 9, T, tele(T, 1), 0);
    expect(JSON.parse(a.telemetryEntry('s', 'inv', T)!.entry)).toEqual({ power_W: 2 });
    expect(a.telemetryKeys().size).toBe(1);
    a.close();
    b.close();
  });

  it('finds a hole, asks once though two instances scan, and records it filled when the resync is all there', () => {
    const [a, b] = stores();
    a.accept('s', 'p/s', 1, T, state(1), 0);
    a.accept('s', 'p/s', 4, T + 3_600_000, state(4), 0);
    expect(a.gaps()).toEqual([{ siteId: 's', fromSeq: 2, toSeq: 3, beforeTime: T, afterTime: T + 3_600_000 }]);
    const sent: string[] = [];
    const send = (p: string, id: string, interval: string) => sent.push(`${p} ${id} ${interval}`);
    const policy = { waitMs: 1000, retryMs: 60_000 };
    expect(scanGaps(a, policy, send, 0)).toEqual({ found: 1, requested: 0, closed: 0 });
    expect(scanGaps(b, policy, send, 1000).requested + scanGaps(a, policy, send, 1000).requested).toBe(1);
    expect(sent).toEqual(['p/s gap-1-1 2026-11-01T09:30:00Z/2026-11-01T11:15:00Z']);
    b.accepted('gap-1-1', 5, 6);
    b.accept('s', 'p/s', 5, T, tele(T, 1), 0);
    expect(scanGaps(a, policy, send, 2000).closed).toBe(0);
    a.accept('s', 'p/s', 6, T, tele(T + 900_000, 1), 0);
    expect(scanGaps(a, policy, send, 3000).closed).toBe(1);
    expect(a.holes()[0]).toMatchObject({ status: 'filled', closedAt: 3000, requestedAt: 1000, firstSeq: 5, lastSeq: 6 });
    expect(a.gaps()).toEqual([]);
    a.close();
    b.close();
  });

  it('closes a hole whose own seqs came late as arrived, and asks again for one left unanswered', () => {
    const [a, b] = stores();
    a.accept('s', 'p/s', 1, T, state(1), 0);
    a.accept('s', 'p/s', 3, T, state(3), 0);
    a.accept('s', 'p/s', 5, T, state(5), 0);
    const sent: string[] = [];
    const policy = { waitMs: 0, retryMs: 100 };
    scanGaps(a, policy, (_p, id) => sent.push(id), 0);
    a.accept('s', 'p/s', 2, T, state(2), 0);
    scanGaps(a, policy, (_p, id) => sent.push(id), 50);
    scanGaps(a, policy, (_p, id) => sent.push(id), 200);
    expect(sent).toEqual(['gap-1-1', 'gap-2-1', 'gap-2-2']);
    expect(a.holes().map((h) => [h.fromSeq, h.status])).toEqual([
      [2, 'arrived'],
      [4, 'requested'],
    ]);
    a.close();
    b.close();
  });

  it('asks for at most 31 days, ending at the later side', () => {
    expect(holeInterval({ beforeTime: T - 90 * 86_400_000, afterTime: T })).toBe('2026-10-01T10:15:00Z/2026-11-01T10:15:00Z');
  });
});
