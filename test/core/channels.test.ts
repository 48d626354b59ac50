import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { TelemetryEntry } from '../../src/api/http/schemas.js';
import {
  CHANNEL_GROUP,
  CHANNEL_TABLE,
  CHANNEL_UNITS,
  type ChannelId,
  INCLUDE_GROUPS,
  type SocScale,
} from '../../src/core/channels.js';
import { DERIVED_CONSUMPTION, ROLES } from '../../src/core/roles.js';
import { bucketRange, COL, insertBucket } from '../../src/store/buckets.js';
import { openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { entryShape, toEntry } from '../../src/telemetry/entry.js';

/** The spec's "Channels" table: channel id → unit, as the spec writes it. */
const SPEC_CHANNELS: Record<string, string> = {
  power_W: 'W',
  power_AC_W: 'W',
  power_DC_W: 'W',
  soc: 'percent',
  soh: 'percent',
  energy_Wh_increment: 'Wh',
  energy_Wh_decrement: 'Wh',
  state: 'None',
};

describe('the channel table', () => {
  it('holds every spec channel with the spec unit, and no other', () => {
    expect(CHANNEL_UNITS).toEqual(SPEC_CHANNELS);
  });

  it('puts the lifetime counters in the energy group and everything else in default (spec: include=energy)', () => {
    for (const c of CHANNEL_TABLE)
      expect([c.id, CHANNEL_GROUP[c.id]]).toEqual([c.id, c.unit === 'Wh' ? 'energy' : 'default']);
  });

  it('rolls power up as a mean, soc/soh/state as the last value, energy as the value at the end (design.md)', () => {
    const rule = Object.fromEntries(CHANNEL_TABLE.map((c) => [c.id, c.rollup]));
    expect(rule).toEqual({
      power_W: 'mean',
      power_AC_W: 'mean',
      power_DC_W: 'mean',
      soc: 'last',
      soh: 'last',
      energy_Wh_increment: 'end',
      energy_Wh_decrement: 'end',
      state: 'last',
    });
  });

  it('names a column that the migrations created for every channel, and the buckets table has no channel column beside them', () => {
    const db = openDatabase(':memory:');
    const columns = (db.pragma('table_info(buckets)') as { name: string }[]).map((c) => c.name);
    const channelColumns = columns.filter((c) => !['stream', 'start_s', 'covered_ms'].includes(c));
    expect(channelColumns.sort()).toEqual(CHANNEL_TABLE.map((c) => c.column).sort());
    db.close();
  });

  it('stores and reads back every channel in its own column (a row with each field distinct)', () => {
    const db = openDatabase(':memory:');
    const stream = streamKey(db, 's');
    const values = Object.fromEntries(
      CHANNEL_TABLE.map((c, i) => [c.field, c.value === 'state' ? 'not_present' : i + 0.25]),
    );
    insertBucket(db, { stream, startS: 900, coveredMs: 1234, ...values } as Parameters<typeof insertBucket>[1]);
    const [row] = bucketRange(db, stream, 0, 10_000);
    expect(row?.[COL.startS]).toBe(900);
    expect(row?.[COL.coveredMs]).toBe(1234);
    for (const c of CHANNEL_TABLE) expect([c.field, row?.[COL[c.field]]]).toEqual([c.field, values[c.field]]);
    db.close();
  });
});

describe('telemetry entries', () => {
  // the validator fastify runs the schema with (TypeBox's own Value.Check skips `enum` on strings)
  const check = new Ajv({ strict: false }).compile(TelemetryEntry);
  const head = ['deviceKind', 'kind', 'deviceId', 'interval'];
  const sample = (c: ChannelId): number | string => (c === 'state' ? 'unknown' : c === 'soc' ? 55.23 : -12.5);
  const streams = [...Object.values(ROLES).flatMap((r) => r.streams), DERIVED_CONSUMPTION];

  it('the schema has the entry head and one field per channel of the table, nothing else', () => {
    expect(Object.keys(TelemetryEntry.properties).sort()).toEqual([...head, ...CHANNEL_TABLE.map((c) => c.id)].sort());
  });

  for (const socScale of ['percent', 'fraction'] as SocScale[]) {
    it(`the schema accepts what toEntry builds for every stream of every role (soc as ${socScale})`, () => {
      for (const s of streams) {
        const shape = entryShape(s.channels, new Set(INCLUDE_GROUPS), socScale);
        const e = toEntry(
          s.deviceKind,
          'x',
          '2026-11-23T00:00:00Z/2026-11-23T00:15:00Z',
          shape,
          shape.names.map(sample),
        );
        expect(e).toBeDefined();
        expect(Object.keys(e ?? {})).toEqual([...head, ...s.channels]);
        expect([s.label, check(e), check.errors ?? null]).toEqual([s.label, true, null]);
        if (s.channels.includes('soc')) expect(e?.soc).toBe(socScale === 'fraction' ? 0.5523 : 55.23);
      }
    });
  }

  it('the schema refuses an entry toEntry would never build (a grid state outside the spec, a text power)', () => {
    const ok = { deviceKind: 'meter', kind: 'meter', deviceId: 'm', interval: 'a/b', power_W: 1, state: 'ok' };
    expect(check(ok)).toBe(true);
    expect(check({ ...ok, state: 'open' })).toBe(false);
    expect(check({ ...ok, power_W: '1' })).toBe(false);
  });

  it('leaves out channels of a group not asked for, and an entry with no value at all', () => {
    const shape = entryShape(['power_W', 'energy_Wh_increment', 'power_W'], new Set(['default'] as const), 'percent');
    expect(shape.names).toEqual(['power_W']);
    expect(toEntry('meter', 'm', 'a/b', shape, [null])).toBeUndefined();
    expect(toEntry('meter', 'm', 'a/b', shape, [7])).toEqual({
      deviceKind: 'meter',
      kind: 'meter',
      deviceId: 'm',
      interval: 'a/b',
      power_W: 7,
    });
  });
});
