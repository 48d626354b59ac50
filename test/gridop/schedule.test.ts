import { describe, expect, it } from 'vitest';
import { limitsOf } from '../../src/gridop/limits.js';
import { type ControlBase, type DerControl, EVENT_STATUS, RESPONSE_STATUS } from '../../src/gridop/resources.js';
import {
  drawRandomization,
  inForce,
  type Phase,
  type ProgramControls,
  type Randomization,
  responsesDue,
} from '../../src/gridop/schedule.js';

const T = 1_700_000_000;
let n = 0;
function control(over: Partial<Omit<DerControl, 'base'>> & { base?: Partial<ControlBase> } = {}): DerControl {
  n++;
  return {
    mRID: over.mRID ?? `C${n}`,
    creationTime: T - 100 + n,
    currentStatus: EVENT_STATUS.scheduled,
    statusTime: T - 100,
    start: T,
    duration: 600,
    responseRequired: 3,
    replyTo: '/rsp',
    ...over,
    base: { unsupported: [], ...over.base },
  };
}
const program = (primacy: number, controls: DerControl[], dflt?: Partial<ControlBase>): ProgramControls => ({
  mRID: `P${primacy}`,
  primacy,
  controls,
  ...(dflt ? { defaultControl: { mRID: `D${primacy}`, base: { unsupported: [], ...dflt } } } : {}),
});
const none = new Map<string, Randomization>();

describe('which control is in force', () => {
  it('runs a control from its start for its duration; the default before and after', () => {
    const c = control({ base: { exportW: 1500 } });
    const ps = [program(1, [c], { exportW: 5000 })];
    expect(inForce(ps, none, T - 1).fields.exportW).toEqual({ value: 5000, mRID: 'D1', kind: 'default', until: null });
    expect(inForce(ps, none, T - 1).nextChange).toBe(T);
    expect(inForce(ps, none, T).fields.exportW).toEqual({ value: 1500, mRID: c.mRID, kind: 'control', until: T + 600 });
    expect(inForce(ps, none, T + 599).running).toEqual([c.mRID]);
    expect(inForce(ps, none, T + 600).fields.exportW?.kind).toBe('default');
    expect(inForce(ps, none, T + 600).nextChange).toBeNull();
  });

  it('honours the randomisation drawn for a control, within its bounds', () => {
    const c = control({ randomizeStart: 120, randomizeDuration: -60, base: { exportW: 0 } });
    expect(drawRandomization(c, () => 0)).toEqual({ start: 0, end: 0, cancel: 0 });
    const r = drawRandomization(c, () => 0.5);
    expect(r).toEqual({ start: 60, end: -30, cancel: 60 });
    const ps = [program(1, [c])];
    const rand = new Map([[c.mRID, r]]);
    expect(inForce(ps, rand, T + 59).fields.exportW).toBeUndefined();
    expect(inForce(ps, rand, T + 60).fields.exportW?.until).toBe(T + 570);
    expect(inForce(ps, rand, T + 570).fields.exportW).toBeUndefined();
  });

  it('gives each limit to the lowest primacy, then the newest control; the loser is superseded', () => {
    const low = control({ base: { exportW: 3000, generationW: 8000 }, creationTime: T - 50 });
    const high = control({ base: { exportW: 1000 }, creationTime: T - 90 });
    const newer = control({ base: { exportW: 2000 }, creationTime: T - 10 });
    const s = inForce([program(5, [low, newer]), program(1, [high])], none, T + 1);
    expect(s.fields.exportW?.mRID).toBe(high.mRID);
    // a limit only the lower-priority control sets stays its
    expect(s.fields.generationW).toMatchObject({ value: 8000, mRID: low.mRID });
    expect(s.superseded).toEqual([newer.mRID]);
    const same = inForce([program(5, [low, newer])], none, T + 1);
    expect(same.fields.exportW?.mRID).toBe(newer.mRID);
  });

  it('stops cancelled and server-superseded controls at once, and cancelled-with-randomisation at its drawn moment', () => {
    const cancelled = control({ currentStatus: EVENT_STATUS.cancelled, base: { exportW: 0 } });
    const superseded = control({ currentStatus: EVENT_STATUS.superseded, base: { importW: 0 } });
    const later = control({
      currentStatus: EVENT_STATUS.cancelledWithRandomization,
      statusTime: T + 100,
      randomizeStart: 30,
      base: { generationW: 0 },
    });
    const rand = new Map([[later.mRID, { start: 0, end: 0, cancel: 20 }]]);
    const ps = [program(1, [cancelled, superseded, later])];
    expect(inForce(ps, rand, T + 1).fields).toEqual({
      generationW: { value: 0, mRID: later.mRID, kind: 'control', until: T + 120 },
    });
    expect(inForce(ps, rand, T + 120).fields).toEqual({});
  });

  it('takes the default of the lowest-primacy program that sets the limit, never a negative one', () => {
    const ps = [
      program(9, [], { exportW: 5000, importW: 7000 }),
      program(2, [], { exportW: 1500 }),
      program(1, [], { importW: -5 }),
    ];
    const s = inForce(ps, none, T);
    expect(s.fields.exportW).toMatchObject({ value: 1500, mRID: 'D2' });
    expect(s.fields.importW).toMatchObject({ value: 7000, mRID: 'D9' });
  });

  it('hands limits over flat, controls before defaults, until in ms', () => {
    const c = control({ base: { exportW: 0, connect: true } });
    expect(limitsOf(inForce([program(1, [c], { generationW: 4000 })], none, T + 5))).toEqual({
      source: 'grid-operator',
      exportW: 0,
      generationW: 4000,
      connect: true,
      controlId: `${c.mRID},D1`,
      kind: 'control',
      until: (T + 600) * 1000,
    });
    expect(limitsOf(inForce([program(1, [])], none, T))).toEqual({
      source: 'grid-operator',
      controlId: null,
      kind: 'none',
      until: null,
    });
  });

  it('never puts in force a limit another running control beats (seeded random schedules)', () => {
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    let decided = 0;
    for (let run = 0; run < 300; run++) {
      const ps = [1, 2, 3].map(() =>
        program(
          Math.floor(rnd() * 3),
          Array.from({ length: Math.floor(rnd() * 4) }, () =>
            control({
              start: T + Math.floor(rnd() * 100),
              duration: 1 + Math.floor(rnd() * 100),
              creationTime: T - Math.floor(rnd() * 10),
              currentStatus: Math.floor(rnd() * 5),
              statusTime: T + Math.floor(rnd() * 100),
              base: rnd() < 0.5 ? { exportW: Math.floor(rnd() * 5000) } : { exportW: 100, importW: 200 },
            }),
          ),
          rnd() < 0.5 ? { exportW: 9999 } : undefined,
        ),
      );
      const now = T + Math.floor(rnd() * 120);
      const s = inForce(ps, none, now);
      const w = s.fields.exportW;
      const live = ps.flatMap((p) =>
        p.controls
          .filter((c) => c.currentStatus <= 1 || c.currentStatus === 3)
          .filter(
            (c) =>
              c.start <= now && now < Math.min(c.start + c.duration, c.currentStatus === 3 ? c.statusTime : Infinity),
          )
          .map((c) => ({ c, primacy: p.primacy })),
      );
      if (live.length === 0) {
        expect(w?.kind ?? 'default').toBe('default');
        continue;
      }
      decided++;
      const winner = live.find((l) => l.c.mRID === w?.mRID);
      expect(winner, `run ${run}`).toBeDefined();
      for (const l of live) expect(l.primacy >= winner!.primacy, `run ${run}`).toBe(true);
      expect(w!.until! > now).toBe(true);
      if (s.nextChange !== null) expect(s.nextChange > now).toBe(true);
    }
    // the runs must have decided between running controls, or the test proves nothing
    expect(decided).toBeGreaterThan(50);
  });
});

describe('responses', () => {
  const step = (ps: ProgramControls[], phases: Map<string, Phase>, now: number) =>
    responsesDue(ps, none, inForce(ps, none, now), phases, now);

  it('says received, started and completed once each, as the control asks', () => {
    const c = control({ base: { exportW: 0 } });
    const ps = [program(1, [c])];
    let r = step(ps, new Map(), T - 10);
    expect(r.due.map((d) => d.status)).toEqual([RESPONSE_STATUS.received]);
    r = step(ps, r.phases, T - 5);
    expect(r.due).toEqual([]);
    r = step(ps, r.phases, T);
    expect(r.due.map((d) => d.status)).toEqual([RESPONSE_STATUS.started]);
    r = step(ps, r.phases, T + 600);
    expect(r.due.map((d) => d.status)).toEqual([RESPONSE_STATUS.completed]);
    expect(step(ps, r.phases, T + 700).due).toEqual([]);
  });

  it('says cancelled for a control cancelled while running and superseded for one a higher priority overrides', () => {
    const c = control({ base: { exportW: 0 } });
    let r = step([program(1, [c])], new Map(), T + 1);
    expect(r.due.map((d) => d.status)).toEqual([RESPONSE_STATUS.received, RESPONSE_STATUS.started]);
    const cancelled = { ...c, currentStatus: EVENT_STATUS.cancelled };
    r = step([program(1, [cancelled])], r.phases, T + 2);
    expect(r.due.map((d) => d.status)).toEqual([RESPONSE_STATUS.cancelled]);

    const low = control({ base: { exportW: 3000 } });
    const high = control({ base: { exportW: 1000 } });
    const s = step([program(5, [low]), program(1, [high])], new Map(), T + 1);
    expect(s.due.map((d) => [d.control.mRID, d.status])).toEqual([
      [low.mRID, RESPONSE_STATUS.received],
      [low.mRID, RESPONSE_STATUS.superseded],
      [high.mRID, RESPONSE_STATUS.received],
      [high.mRID, RESPONSE_STATUS.started],
    ]);
  });

  it('refuses a control that has ended (254), that sets nothing sitegw does (252) or a negative limit (253)', () => {
    const ended = control({ start: T - 1000, duration: 10, base: { exportW: 0 } });
    const targetW = control({ base: { unsupported: ['opModTargetW'] } });
    const negative = control({ base: { exportW: -100 } });
    const r = step([program(1, [ended, targetW, negative])], new Map(), T);
    expect(r.due.map((d) => d.status)).toEqual([
      RESPONSE_STATUS.expired,
      RESPONSE_STATUS.notApplicable,
      RESPONSE_STATUS.invalid,
    ]);
    expect(inForce([program(1, [negative])], none, T).fields).toEqual({});
  });

  it('posts only what responseRequired asks, and nothing without replyTo', () => {
    const quiet = control({ responseRequired: 0, base: { exportW: 0 } });
    const receivedOnly = control({ responseRequired: 1, base: { importW: 0 } });
    const { replyTo: _, ...noReply } = control({ base: { generationW: 0 } });
    const r = step([program(1, [quiet, receivedOnly, noReply])], new Map(), T + 1);
    expect(r.due.map((d) => [d.control.mRID, d.status])).toEqual([[receivedOnly.mRID, RESPONSE_STATUS.received]]);
    expect(r.phases.get(quiet.mRID)).toBe('started');
  });
});
