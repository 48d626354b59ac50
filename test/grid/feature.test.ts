/**
 * The grid feature's in-transaction event: `gridEventRecording` listeners run inside the
 * transaction that stores the grid event, and one that throws rolls the event back with them.
 * A disk that refuses writes keeps the events waiting in memory (docs/design.md "Field faults: what the numbers survive").
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GridState } from '../../src/core/channels.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus, type GridEvent } from '../../src/core/events.js';
import { TimeLabels } from '../../src/core/time-labels.js';
import { GridFeature, MAX_WAITING_GRID_EVENTS } from '../../src/grid/feature.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { recentGridEvents } from '../../src/store/grid-events.js';
import { GRID, siteConfig } from '../tariffs/fixture.js';

function grid() {
  const db = openDatabase(':memory:');
  const bus = new EventBus(pino({ level: 'silent' }));
  const site = new Site(siteConfig());
  const feature = new GridFeature({ site, db, bus: bus.as('grid'), log: pino({ level: 'silent' }), debounce: 1 });
  feature.start();
  const announced: GridEvent[] = [];
  bus.on('gridEvent', (e) => void announced.push(e));
  let ts = 0;
  const read = (state: GridState) => bus.emit('reading', { streamId: GRID, ts: (ts += 10_000), values: { state } });
  return { db, bus, announced, read, feature };
}

describe('grid events inside their transaction', () => {
  it('a listener writes in the transaction that stores the event', () => {
    const { db, bus, announced, read } = grid();
    const inside: boolean[] = [];
    bus.as('uplink').inTransaction('gridEventRecording', () => void inside.push(db.inTransaction));
    read('ok');
    read('not_present');
    expect(inside).toEqual([true]);
    expect(recentGridEvents(db, 10).map((e) => e.state)).toEqual(['not_present']);
    expect(announced.map((e) => e.state)).toEqual(['not_present']);
  });

  it('a listener that throws rolls the event back: not stored, not announced; counted as a grid failure', () => {
    const { db, bus, announced, read } = grid();
    bus.as('uplink').inTransaction('gridEventRecording', () => {
      throw new Error('outbox full');
    });
    read('ok');
    read('not_present');
    expect(recentGridEvents(db, 10)).toEqual([]);
    expect(announced).toEqual([]);
    expect(bus.listenerFailures()).toEqual([{ event: 'reading', feature: 'grid', count: 1 }]);
  });
});

describe('grid events on a disk that refuses writes', () => {
  // query_only makes every write fail with SQLITE_READONLY: a storage fault, as a full disk's
  // SQLITE_FULL is, on a real database
  it('announces at once, keeps the events in order in memory and stores them with their outbox rows once writes work', () => {
    const { db, bus, announced, read, feature } = grid();
    const outbox: string[] = [];
    bus.as('uplink').inTransaction('gridEventRecording', (e) => void outbox.push(`${e.state}@${e.timestamp}`));
    read('ok');
    db.pragma('query_only = ON');
    read('not_present');
    read('ok');
    expect(announced.map((e) => e.state)).toEqual(['not_present', 'ok']);
    expect(feature.waitingCount).toBe(2);
    expect(recentGridEvents(db, 10)).toEqual([]);
    expect(outbox).toEqual([]);
    expect(bus.listenerFailures()).toEqual([]);
    db.pragma('query_only = OFF');
    read('ok');
    expect(feature.waitingCount).toBe(0);
    expect(recentGridEvents(db, 10).map((e) => `${e.state}@${e.timestamp}`)).toEqual(['ok@30000', 'not_present@20000']);
    expect(outbox).toEqual(['not_present@20000', 'ok@30000']);
    expect(announced).toHaveLength(2);
  });

  it('keeps at most MAX_WAITING_GRID_EVENTS, the oldest dropped first', () => {
    const { db, read, feature } = grid();
    read('ok');
    db.pragma('query_only = ON');
    for (let i = 0; i < MAX_WAITING_GRID_EVENTS + 5; i++) read(i % 2 === 0 ? 'not_present' : 'ok');
    expect(feature.waitingCount).toBe(MAX_WAITING_GRID_EVENTS);
    db.pragma('query_only = OFF');
    // the state it is already in: no new change, the waiting ones are stored
    read('not_present');
    const stored = recentGridEvents(db, 2 * MAX_WAITING_GRID_EVENTS);
    expect(stored).toHaveLength(MAX_WAITING_GRID_EVENTS);
    // the first five changes (readings 2..6, at 20 s..60 s) were dropped
    expect(Math.min(...stored.map((e) => e.timestamp))).toBe(70_000);
  });
});

// issue 41, finding 1: a relay change during a forward clock glitch was stored and sent labelled in the future
describe('grid events and a forward clock step', () => {
  const T0 = Date.parse('2026-12-01T10:00:00Z');
  const DAY = 86_400_000;
  function held() {
    const db = openDatabase(':memory:');
    const bus = new EventBus(pino({ level: 'silent' }));
    const clock = new ManualClock(T0);
    const labels = new TimeLabels({ clock, notBefore: 0, newestStored: () => -Infinity });
    const feature = new GridFeature({
      site: new Site(siteConfig()),
      db,
      bus: bus.as('grid'),
      log: pino({ level: 'silent' }),
      debounce: 1,
      labels,
    });
    feature.start();
    const outbox: number[] = [];
    bus.as('uplink').inTransaction('gridEventRecording', (e) => void outbox.push(e.timestamp));
    const read = (state: GridState) => {
      clock.advance(10_000);
      const l = labels.label(clock.now());
      if (l.ok) bus.emit('reading', { streamId: GRID, ts: l.at, values: { state } });
    };
    return { db, clock, outbox, read };
  }

  it('undone: the change labelled in the stepped-to day is neither stored nor sent; the next is', () => {
    const { db, clock, outbox, read } = held();
    read('ok');
    clock.step(DAY);
    read('not_present');
    expect(outbox).toEqual([]);
    clock.step(-DAY);
    read('ok');
    expect(recentGridEvents(db, 10).every((e) => e.timestamp <= clock.now())).toBe(true);
    expect(outbox).toEqual([clock.now()]);
  });

  it('confirmed: the change is stored and sent in the new time', () => {
    const { clock, outbox, read } = held();
    read('ok');
    clock.step(DAY);
    read('not_present');
    for (let i = 0; i < 61; i++) read('not_present');
    expect(outbox).toEqual([T0 + DAY + 20_000]);
  });
});
