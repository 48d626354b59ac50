/**
 * The grid feature's in-transaction event: `gridEventRecording` listeners run inside the
 * transaction that stores the grid event, and one that throws rolls the event back with them.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GridState } from '../../src/core/channels.js';
import { EventBus, type GridEvent } from '../../src/core/events.js';
import { GridFeature } from '../../src/grid/feature.js';
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
  return { db, bus, announced, read };
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
