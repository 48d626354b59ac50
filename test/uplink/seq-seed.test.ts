/**
 * Where a new outbox's seqs start (issue 27, finding 6): above the ceiling file when there is one,
 * whatever the clock says; without one, not before the clock can be right (state messages wait).
 * The Uplink over a real SQLite file; its broker address refuses, so nothing is published.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readSeqCeiling } from '../../src/store/seq-ceiling.js';
import { offlineUplink } from '../support/offline-uplink.js';

const BUILD = Date.parse('2026-11-01T00:00:00Z');
const NOW = Date.parse('2026-11-27T10:00:00Z');
const Y2020 = Date.parse('2020-01-01T00:00:00Z');

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const uplink = (start: number, ceiling?: number) => offlineUplink({ start, ceiling, plausibleFrom: BUILD }, cleanups);

describe('uplink seq seeding', () => {
  it('a fresh database with the clock in 2020 continues above the ceiling file', () => {
    const ceiling = 1_795_000_000_000;
    const { seqs, seqFile } = uplink(Y2020, ceiling);
    // the topology message of the start
    expect(seqs().length).toBeGreaterThan(0);
    expect(Math.min(...seqs())).toBeGreaterThan(ceiling);
    expect(readSeqCeiling(seqFile)).toBeGreaterThanOrEqual(Math.max(...seqs()));
  });

  it('without a ceiling and with the clock in 2020, state messages wait for a clock that can be right', () => {
    const { seqs, clock, bus, seqFile } = uplink(Y2020);
    expect(seqs()).toEqual([]);
    bus.emit('deviceHealth', { deviceId: 'inverter', online: true, lastSeen: clock.now() });
    expect(seqs()).toEqual([]);
    clock.step(NOW - Y2020);
    bus.emit('deviceHealth', { deviceId: 'inverter', online: false, lastSeen: clock.now(), error: 'timeout: x' });
    // the topology, both availabilities: in order, above the wall clock now that it can be right
    expect(seqs()).toHaveLength(3);
    expect(Math.min(...seqs())).toBeGreaterThan(NOW);
    expect(readSeqCeiling(seqFile)).toBeGreaterThanOrEqual(Math.max(...seqs()));
  });

  it('a clock that becomes right while the disk refuses the raise: the next write raises first', () => {
    const { db, seqs, clock, bus } = uplink(Y2020);
    // the counter as a migration under the 2020 clock seeded it
    db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'uplink_outbox'").run(Y2020);
    clock.step(NOW - Y2020);
    // query_only makes every write fail with SQLITE_READONLY, a storage fault, as a full disk's SQLITE_FULL is
    db.pragma('query_only = ON');
    bus.emit('deviceHealth', { deviceId: 'inverter', online: true, lastSeen: clock.now() });
    db.pragma('query_only = OFF');
    bus.emit('deviceHealth', { deviceId: 'inverter', online: false, lastSeen: clock.now(), error: 'timeout: x' });
    // the message the disk refused waited (before: it was lost with the raise's fault)
    expect(bus.listenerFailures()).toEqual([]);
    expect(seqs()).toHaveLength(3);
    // before: the refused raise counted as done, and these went out below the site's earlier seqs
    expect(Math.min(...seqs())).toBeGreaterThan(NOW);
  });
});
