/**
 * The event bus: a listener that throws or rejects is logged with its event and feature and
 * counted, and the other listeners and the emitter go on; in-transaction listeners are not
 * isolated, since their failure must roll their producer's transaction back.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/core/events.js';

const reading = { streamId: 'inverter', ts: 0, values: { power_W: 1 } };

function loggedBus(): { bus: EventBus; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(chunk.toString());
      done();
    },
  });
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { bus: new EventBus(pino({ level: 'error' }, sink)), lines };
}

describe('event bus isolation', () => {
  it('a throwing listener does not stop the listeners after it nor the emitter; it is logged and counted', () => {
    const { bus, lines } = loggedBus();
    const heard: string[] = [];
    bus.as('bucketer').on('reading', () => void heard.push('bucketer'));
    bus.as('faulty').on('reading', () => {
      throw new Error('broken listener');
    });
    bus.as('websocket').on('reading', () => void heard.push('websocket'));
    expect(() => bus.emit('reading', reading)).not.toThrow();
    bus.emit('reading', reading);
    expect(heard).toEqual(['bucketer', 'websocket', 'bucketer', 'websocket']);
    expect(bus.listenerFailures()).toEqual([{ event: 'reading', feature: 'faulty', count: 2 }]);
    // the first failure is logged with the event and the feature; the second only counted
    expect(lines()).toHaveLength(1);
    const [line] = lines();
    expect(line).toMatchObject({ event: 'reading', feature: 'faulty', failures: 1 });
    expect(line?.err).toMatchObject({ message: 'broken listener' });
  });

  it('a listener whose promise rejects is counted too, and the others have run', async () => {
    const { bus, lines } = loggedBus();
    let after = 0;
    bus.as('uplink').on('deviceHealth', async () => {
      throw new Error('async failure');
    });
    bus.as('homeassistant').on('deviceHealth', () => void after++);
    bus.emit('deviceHealth', { deviceId: 'meter', online: false, lastSeen: null });
    expect(after).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(bus.listenerFailures()).toEqual([{ event: 'deviceHealth', feature: 'uplink', count: 1 }]);
    expect(lines()[0]).toMatchObject({ event: 'deviceHealth', feature: 'uplink', err: { message: 'async failure' } });
  });

  it('every feature view shares one listener table; unsubscribing during an emit skips nobody', () => {
    const bus = new EventBus(pino({ level: 'silent' }));
    const heard: string[] = [];
    const off = bus.as('a').on('streamsChanged', () => {
      heard.push('a');
      off();
    });
    bus.as('b').on('streamsChanged', () => void heard.push('b'));
    bus.emit('streamsChanged', { deviceId: 'x' });
    bus.as('c').emit('streamsChanged', { deviceId: 'x' });
    expect(heard).toEqual(['a', 'b', 'b']);
  });
});

describe('in-transaction events', () => {
  it('run in order, and the first throw reaches the producer (its transaction rolls back)', () => {
    const bus = new EventBus(pino({ level: 'silent' }));
    const ran: string[] = [];
    bus.as('uplink').inTransaction('bucketsClosing', () => {
      ran.push('uplink');
      throw new Error('disk full');
    });
    bus.as('other').inTransaction('bucketsClosing', () => void ran.push('other'));
    expect(() => bus.runInTransaction('bucketsClosing', [])).toThrow('disk full');
    expect(ran).toEqual(['uplink']);
    // not a listener failure of the isolated kind: the producer handles it
    expect(bus.listenerFailures()).toEqual([]);
  });

  it('are separate from the after-the-fact events of the same data', () => {
    const bus = new EventBus(pino({ level: 'silent' }));
    let inside = 0;
    let after = 0;
    bus.inTransaction('bucketsClosing', () => void inside++);
    bus.on('bucketsClosed', () => void after++);
    bus.emit('bucketsClosed', { start: 0, end: 1, buckets: [] });
    expect([inside, after]).toEqual([0, 1]);
    bus.runInTransaction('bucketsClosing', []);
    expect([inside, after]).toEqual([1, 1]);
  });
});

describe('listener series', () => {
  it('name every registered listener at 0 before it fails, and keep a failed one after it unsubscribes', () => {
    const bus = new EventBus(pino({ level: 'silent' }));
    bus.as('bucketer').on('reading', () => {});
    const off = bus.as('faulty').on('gridEvent', () => {
      throw new Error('broken');
    });
    expect(bus.listenerSeries()).toEqual([
      { event: 'reading', feature: 'bucketer', count: 0 },
      { event: 'gridEvent', feature: 'faulty', count: 0 },
    ]);
    bus.emit('gridEvent', { deviceId: 'm', streamId: 'm', timestamp: 0, state: 'ok' });
    off();
    expect(bus.listenerSeries()).toEqual([
      { event: 'reading', feature: 'bucketer', count: 0 },
      { event: 'gridEvent', feature: 'faulty', count: 1 },
    ]);
  });
});
