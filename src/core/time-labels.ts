/**
 * What time a reading is labelled with (docs/design.md "Field faults: what the numbers survive", wall clock row). The wall
 * clock only labels; intervals run on the monotonic clock (core/clock.ts). This decides, once per
 * poll, whether the wall clock may label at all:
 * - not before `notBefore` (the build date, src/version.ts): a Pi without a real-time clock boots
 *   in 1970 or at fake-hwclock's last save, and data labelled then would be stored, published
 *   and never corrected;
 * - not before the newest label given or the end of the newest stored bucket: a step back would
 *   put readings into buckets already written and sent. Until the wall clock reaches them again,
 *   devices are polled (their health stays true) and their readings are not recorded. An equal
 *   time is not behind: a reading at a stored bucket's end opens the next bucket, and a scaled
 *   clock reads in steps of `speed` ms, so two ticks within one step read the same time.
 * It also notices steps: the wall clock moved more or less than the monotonic clock since the
 * last look. A step is logged once and shown in health for an hour.
 */
import type { Clock } from './clock.js';

export interface ClockStep {
  /** wall clock after the step, ms epoch */
  at: number;
  /** how far it moved beyond the monotonic clock: negative = back */
  byMs: number;
  /** monotonic ms when it was noticed */
  monoAt: number;
}

export type Label = { ok: true; at: number } | { ok: false; why: 'implausible' | 'behind' };

export interface TimeLabelsOptions {
  clock: Clock;
  /** the earliest wall time that can be right (ms epoch): the build date */
  notBefore: number;
  /** end of the newest bucket already stored (ms epoch), -Infinity before one */
  newestStored: () => number;
  /** told once per step */
  onStep?: (step: ClockStep) => void;
  /** told when labelling stops or starts again (why null: labelling again) */
  onRefusal?: (why: 'implausible' | 'behind' | null, wall: number, floor: number) => void;
}

/** A difference between the two clocks this large (real ms) is a step; NTP slews far less (0.5 ms/s). */
export const STEP_THRESHOLD_MS = 2_000;
/** how long health shows a step, real ms */
export const STEP_SHOWN_MS = 3_600_000;

export class TimeLabels {
  private lastLabel = -Infinity;
  private seen: { wall: number; mono: number } | null = null;
  private refusing: 'implausible' | 'behind' | null = null;
  private readonly steps: ClockStep[] = [];
  /** polls whose readings were not recorded because the clock could not label them */
  unlabelled = 0;

  constructor(private readonly o: TimeLabelsOptions) {}

  /** Compares the clocks since the last look; the step, if there was one. */
  observe(): ClockStep | null {
    const { clock } = this.o;
    const wall = clock.now();
    const mono = clock.mono();
    const before = this.seen;
    this.seen = { wall, mono };
    if (!before) return null;
    const byMs = wall - before.wall - (mono - before.mono);
    if (Math.abs(byMs) < STEP_THRESHOLD_MS * clock.speed) return null;
    const step = { at: wall, byMs, monoAt: mono };
    this.steps.push(step);
    if (this.steps.length > 8) this.steps.shift();
    this.o.onStep?.(step);
    return step;
  }

  /** Whether the wall clock can be right at all (not before the build). */
  plausible(wall = this.o.clock.now()): boolean {
    return wall >= this.o.notBefore;
  }

  /** The earliest label that may be given next (inclusive). */
  floor(): number {
    return Math.max(this.lastLabel, this.o.newestStored());
  }

  /** The label for readings taken now, stamped `at` (wall ms); a refusal says why. */
  label(at: number): Label {
    this.observe();
    const floor = this.floor();
    const why = !this.plausible(at) ? 'implausible' : at < floor ? 'behind' : null;
    if (why !== this.refusing) this.o.onRefusal?.(why, at, floor);
    this.refusing = why;
    if (why) {
      this.unlabelled++;
      return { ok: false, why };
    }
    this.lastLabel = at;
    return { ok: true, at };
  }

  /** Sentences for health: a recent step, and why readings are not recorded now. */
  problems(): string[] {
    const { clock } = this.o;
    const mono = clock.mono();
    const out: string[] = [];
    for (const s of this.steps) {
      if ((mono - s.monoAt) / clock.speed > STEP_SHOWN_MS) continue;
      const dir = s.byMs < 0 ? 'back' : 'forward';
      out.push(
        `the wall clock stepped ${dir} by ${Math.round(Math.abs(s.byMs) / 1000)} s (to ${iso(s.at)}); polling went on, on the monotonic clock`,
      );
    }
    if (this.refusing === 'implausible')
      out.push(
        `the wall clock reads ${iso(clock.now())}, before this build (${iso(this.o.notBefore)}): readings are not recorded until it is set (NTP)`,
      );
    else if (this.refusing === 'behind')
      out.push(
        `the wall clock reads ${iso(clock.now())}, before data already recorded (${iso(this.floor())}): readings are not recorded until it passes that time`,
      );
    return out;
  }

  /** Recent steps, oldest first. */
  recentSteps(): readonly ClockStep[] {
    return this.steps;
  }
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z') : String(ms);
}
