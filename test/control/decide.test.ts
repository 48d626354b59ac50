import { describe, expect, it } from 'vitest';
import { decide } from '../../src/control/decide.js';
import { checkPlanSlots, SLOT_MS } from '../../src/control/plan-body.js';
import type { StoredSlot } from '../../src/store/control.js';
import { testEnvelope } from '../support/control-envelope.js';

const env = testEnvelope;
const slot = (over: Partial<StoredSlot>): StoredSlot => ({
  startMs: 0,
  endMs: SLOT_MS,
  mode: 'charge',
  powerW: 2000,
  targetSoc: null,
  status: 'active',
  note: null,
  ...over,
});
const night = { socPct: 50, batteryW: 0, gridW: 800 };

describe('decide: the safety envelope', () => {
  it('self-consumption wins over any slot', () => {
    expect(decide('self-consumption', slot({}), night, env, {}).command).toEqual({ mode: 'self-consumption' });
  });
  it('a charge within every limit is what was asked', () => {
    expect(decide('plan', slot({}), night, env, {})).toEqual({
      command: { mode: 'charge', powerW: 2000 },
      limited: null,
      targetReached: false,
    });
  });
  it('without a measurement a charge or discharge leaves the battery to itself and names what it waits for', () => {
    const { gridW: _, ...noGrid } = night;
    expect(decide('plan', slot({}), noGrid, env, {})).toMatchObject({
      command: { mode: 'self-consumption' },
      waitingFor: 'grid power',
    });
    expect(decide('plan', slot({ mode: 'discharge' }), { gridW: 800 }, env, {}).waitingFor).toBe('soc');
    expect(decide('plan', slot({}), { socPct: 50, gridW: 800 }, env, {}).waitingFor).toBe('battery power');
  });
  it('caps at control.maxChargeW and the nameplate, and says so', () => {
    const d = decide('plan', slot({ powerW: 9000 }), night, env, { maxChargeW: 2500 });
    expect(d.command).toEqual({ mode: 'charge', powerW: 2500 });
    expect(d.limited).toMatch(/maxChargeW/);
  });
  it('keeps import under importLimitW less the margin (5 %), in 50 W steps', () => {
    // 4,200 W of house on the grid: 5,000 − 250 − 4,200 = 550 → 550
    const d = decide('plan', slot({}), { ...night, gridW: 4200 }, env, {});
    expect(d.command).toEqual({ mode: 'charge', powerW: 550 });
    expect(d.limited).toMatch(/importLimitW/);
    // a house over the limit already: no charge at all
    expect(decide('plan', slot({}), { ...night, gridW: 6000 }, env, {}).command).toEqual({ mode: 'charge', powerW: 0 });
  });
  it('without gridCharge charges from PV surplus only', () => {
    const d = decide('plan', slot({}), { socPct: 50, batteryW: 0, gridW: -700 }, { ...env, gridCharge: false }, {});
    expect(d.command).toEqual({ mode: 'charge', powerW: 700 });
  });
  it('the optimiser’s charge stores the PV surplus beyond the slot’s power, within the caps, and never more from the grid', () => {
    const sunny = { socPct: 50, batteryW: 2000, gridW: -1230 };
    const reserve = { socPct: env.reserveSoc, held: false };
    // 2,000 W charging and 1,230 W still exported: 3,230 W of surplus, in 50 W steps, capped at maxChargeW 3,000
    expect(decide('plan', slot({}), sunny, env, {}, false, reserve, true)).toEqual({
      command: { mode: 'charge', powerW: 3000 },
      limited: null,
      targetReached: false,
    });
    expect(decide('plan', slot({}), { ...sunny, gridW: -630 }, env, {}, false, reserve, true).command).toEqual({
      mode: 'charge',
      powerW: 2600,
    });
    // a partner's plan (takeSurplus false) gets the power it asked for
    expect(decide('plan', slot({}), sunny, env, {}, false, reserve).command).toEqual({ mode: 'charge', powerW: 2000 });
    // less surplus than the slot's power: the slot's power, from the grid as planned
    expect(decide('plan', slot({}), night, env, {}, false, reserve, true).command).toEqual({
      mode: 'charge',
      powerW: 2000,
    });
    // the import limit still binds the planned part
    const d = decide('plan', slot({}), { ...night, gridW: 4200 }, env, {}, false, reserve, true);
    expect(d.command).toEqual({ mode: 'charge', powerW: 550 });
    expect(d.limited).toMatch(/importLimitW/);
    // and a target ends it as before
    expect(decide('plan', slot({}), { ...sunny, socPct: 95 }, env, {}, false, reserve, true).command).toEqual({
      mode: 'hold',
    });
  });
  it('ends a charge at targetSoc (or socMax) and holds', () => {
    expect(decide('plan', slot({ targetSoc: 60 }), { ...night, socPct: 60.2 }, env, {})).toMatchObject({
      command: { mode: 'hold' },
      targetReached: true,
    });
    expect(decide('plan', slot({}), { ...night, socPct: 95 }, env, {}).command).toEqual({ mode: 'hold' });
  });
  it('stops a discharge at socMin and keeps export under exportLimitW', () => {
    expect(decide('plan', slot({ mode: 'discharge' }), { ...night, socPct: 10 }, env, {}).command).toEqual({
      mode: 'hold',
    });
    const d = decide(
      'plan',
      slot({ mode: 'discharge', powerW: 3000 }),
      { socPct: 50, batteryW: 0, gridW: -2000 },
      env,
      {},
    );
    // 4,000 − 200 + (−2,000) = 1,800
    expect(d.command).toEqual({ mode: 'discharge', powerW: 1800 });
  });
  it('without measurements does nothing forced', () => {
    expect(decide('plan', slot({}), {}, env, {}).command).toEqual({ mode: 'self-consumption' });
  });
  it('backup charges back up to the reserve and otherwise leaves the device alone', () => {
    expect(decide('backup', undefined, { ...night, socPct: 15 }, env, {}).command.mode).toBe('charge');
    expect(decide('backup', undefined, { ...night, socPct: 25 }, env, {}).command.mode).toBe('self-consumption');
  });
});

describe('decide: the reserve (docs/control.md "The reserve")', () => {
  const reserve = (socPct: number, held = false) => ({ socPct, held });
  const at = (socPct: number, gridW = 800, batteryW = -300) => ({ socPct, gridW, batteryW });
  it('self-consumption is the device’s own above the reserve; at it no discharge, without PV 0 W', () => {
    expect(decide('self-consumption', undefined, at(31), env, {}, false, reserve(30)).command.mode).toBe(
      'self-consumption',
    );
    // the house imports 800 W with the battery giving 300: no surplus, the battery stands still
    expect(decide('self-consumption', undefined, at(30), env, {}, false, reserve(30))).toMatchObject({
      command: { mode: 'charge', powerW: 0 },
      reserveHeld: true,
    });
  });
  it('at the reserve charges the PV surplus only, never from the grid, whatever gridCharge says', () => {
    // exporting 500 W while charging 1,000 W: 1,500 W of surplus
    const d = decide('self-consumption', undefined, at(29, -500, 1000), env, {}, false, reserve(30));
    expect(d.command).toEqual({ mode: 'charge', powerW: 1500 });
    expect(env.gridCharge).toBe(true);
  });
  it('lets go only RESERVE_BAND_PCT above the reserve once held', () => {
    expect(decide('self-consumption', undefined, at(31), env, {}, false, reserve(30, true)).reserveHeld).toBe(true);
    expect(decide('self-consumption', undefined, at(32), env, {}, false, reserve(30, true)).command.mode).toBe(
      'self-consumption',
    );
  });
  it('holds in the gaps of a plan and of the optimiser, and a discharge slot stops at it', () => {
    expect(decide('plan', undefined, at(25), env, {}, false, reserve(30)).command).toEqual({
      mode: 'charge',
      powerW: 0,
    });
    const d = decide('plan', slot({ mode: 'discharge', powerW: 2000 }), at(30, 0, 0), env, {}, false, reserve(30));
    expect(d.command).toEqual({ mode: 'hold' });
    expect(decide('plan', slot({ mode: 'discharge' }), at(31, 0, 0), env, {}, false, reserve(30)).command.mode).toBe(
      'discharge',
    );
  });
  it('backup charges from the grid up to the reserve where gridCharge allows, from PV only where not', () => {
    expect(decide('backup', undefined, at(25, 800, 0), env, {}, false, reserve(30)).command).toEqual({
      mode: 'charge',
      powerW: 3000,
    });
    const noGrid = { ...env, gridCharge: false };
    expect(decide('backup', undefined, at(25, 800, 0), noGrid, {}, false, reserve(30)).command).toEqual({
      mode: 'charge',
      powerW: 0,
    });
    // reached: no discharge below it, and the device's own logic once RESERVE_BAND_PCT above
    expect(decide('backup', undefined, at(30), env, {}, false, reserve(30, true)).command).toEqual({
      mode: 'charge',
      powerW: 0,
    });
    expect(decide('backup', undefined, at(32), env, {}, false, reserve(30, true)).command.mode).toBe(
      'self-consumption',
    );
  });
  it('on a device without hold: a reached target returns to self-consumption, and the reserve is the device’s own', () => {
    const plate = { holds: false };
    expect(decide('plan', slot({ targetSoc: 60 }), { ...night, socPct: 61 }, env, plate)).toMatchObject({
      command: { mode: 'self-consumption' },
      targetReached: true,
    });
    expect(decide('plan', slot({ mode: 'discharge' }), at(30, 0, 0), env, plate, false, reserve(30)).command).toEqual({
      mode: 'self-consumption',
    });
    expect(decide('self-consumption', undefined, at(25), env, plate, false, reserve(30)).command.mode).toBe(
      'self-consumption',
    );
  });
  it('without a state of charge leaves the device alone', () => {
    expect(decide('self-consumption', undefined, {}, env, {}, false, reserve(30)).command.mode).toBe(
      'self-consumption',
    );
  });
});

describe('checkPlanSlots', () => {
  const now = 10 * SLOT_MS + 1000;
  const iv = (a: number, b: number) => `${new Date(a * SLOT_MS).toISOString()}/${new Date(b * SLOT_MS).toISOString()}`;
  it('sorts slots and keeps them pending', () => {
    const s = checkPlanSlots(
      [
        { interval: iv(12, 13), mode: 'hold' },
        { interval: iv(11, 12), mode: 'charge', powerW: 1000 },
      ],
      now,
    );
    expect(s.map((x) => [x.startMs / SLOT_MS, x.status])).toEqual([
      [11, 'pending'],
      [12, 'pending'],
    ]);
  });
  it('names each broken rule', () => {
    const code = (slots: Parameters<typeof checkPlanSlots>[0]) => {
      try {
        checkPlanSlots(slots, now);
      } catch (e) {
        return (e as { code: string }).code;
      }
      return 'ok';
    };
    expect(code([{ interval: 'nonsense', mode: 'hold' }])).toBe('SLOT_INVALID');
    expect(code([{ interval: iv(9, 10), mode: 'hold' }])).toBe('SLOT_IN_PAST');
    expect(code([{ interval: iv(11, 2000), mode: 'hold' }])).toBe('SLOT_TOO_FAR');
    expect(code([{ interval: iv(11, 12), mode: 'discharge' }])).toBe('POWER_REQUIRED');
    expect(code([{ interval: iv(11, 12), mode: 'hold', powerW: 5 }])).toBe('SLOT_INVALID');
    expect(
      code([
        { interval: iv(11, 13), mode: 'hold' },
        { interval: iv(12, 14), mode: 'hold' },
      ]),
    ).toBe('SLOTS_OVERLAP');
  });
  it('stores no string, boolean or infinity as a power or state of charge, whoever checked the body before', () => {
    const refused = (slot: Record<string, unknown>) => {
      try {
        checkPlanSlots([{ interval: iv(11, 12), ...slot } as never], now);
      } catch (e) {
        return `${(e as { code: string }).code} ${(e as Error).message}`;
      }
      return 'stored';
    };
    for (const powerW of ['Infinity', true, '2000', Number.POSITIVE_INFINITY, 1.5, 0])
      expect(refused({ mode: 'charge', powerW })).toMatch(/^SLOT_INVALID slots\[0\]\.powerW/);
    for (const targetSoc of ['Infinity', false, '50', Number.NaN, 101])
      expect(refused({ mode: 'charge', powerW: 1000, targetSoc })).toMatch(/^SLOT_INVALID slots\[0\]\.targetSoc/);
    expect(refused({ mode: 1 })).toMatch(/^SLOT_INVALID slots\[0\]\.mode/);
  });
});
