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
 *
 * A forward step is provisional (docs/design.md "Field faults: what the numbers survive", a forward step undone): a bad NTP or GPS answer
 * steps the clock a day ahead and back two minutes later, and whatever was labelled in between
 * would stand in the future and put every reading of the next day "behind" it. So the readings
 * labelled after a forward step are held (not bucketed: not stored, served or sent) until
 * - the step is undone (the wall clock comes back to the line the monotonic clock kept from the
 *   last trusted time): the held readings are withdrawn, the labels go back to that line and
 *   recording goes on at once; or
 * - the new time has held for CONFIRM_MS, or the kernel's NTP state turns synchronised: the held
 *   readings are bucketed in the new time.
 * A forward step that is NTP's first synchronisation (the kernel said unsynchronised at the look
 * before and synchronised now: a stale boot clock set right) and one from an implausible clock
 * are trusted at once.
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

export type Label =
  | {
      ok: true;
      at: number;
      /** labelled in a provisional time (after a forward step not yet confirmed): held, not bucketed */
      held: boolean;
      /** which run of held labels this is: a label of a withdrawn run must not be published */
      epoch: number;
    }
  | { ok: false; why: 'implausible' | 'behind' };

/** What became of the held labels. */
export type HeldOutcome =
  | { kind: 'confirmed'; from: number }
  | { kind: 'withdrawn'; from: number; to: number; returnedTo: number };

export interface TimeLabelsOptions {
  clock: Clock;
  /** the earliest wall time that can be right (ms epoch): the build date */
  notBefore: number;
  /** end of the newest bucket already stored (ms epoch), -Infinity before one */
  newestStored: () => number;
  /**
   * whether the kernel says the clock is NTP-synchronised (adjtimex, timesyncd, chrony); null
   * when it cannot be read. Read at every look, so it must be cheap (a cached value)
   */
  synchronised?: () => boolean | null;
  /** real ms a forward step must hold before its time is trusted (default CONFIRM_MS) */
  confirmMs?: number;
  /** told once per step */
  onStep?: (step: ClockStep) => void;
  /** told when labelling stops or starts again (why null: labelling again) */
  onRefusal?: (why: 'implausible' | 'behind' | null, wall: number, floor: number) => void;
  /** told when held labels are confirmed or withdrawn */
  onHeld?: (outcome: HeldOutcome) => void;
  /**
   * where the wall clock should read at the first look by the last run's trusted line (the
   * same boot's monotonic clock: ops/clock-anchor.ts); a clock far ahead of it is held as a
   * forward step (a restart inside a glitch). Null: no such line
   */
  startLine?: number | null;
  /** told when the trusted line moves (the first look, a step taken, confirmed or undone), to keep it */
  onTrusted?: (wall: number) => void;
}

/** A difference between the two clocks this large (real ms) is a step; NTP slews far less (0.5 ms/s). */
export const STEP_THRESHOLD_MS = 2_000;
/** how long health shows a step, real ms */
export const STEP_SHOWN_MS = 3_600_000;
/**
 * How long (real ms) a forward step's time must hold before it is trusted without NTP's word: a
 * glitch seen in the field lasted two minutes; what is held meanwhile waits in memory.
 */
export const CONFIRM_MS = 600_000;

interface Held {
  /**
   * labels from here on are held: the kept line plus the step threshold when the step was seen.
   * Not the wall time then: a tick reads the clock before it asks for its label, so its stamp
   * can be a moment before the look that sees the step, and it must be held all the same
   */
  from: number;
  /** the wall time after the step, for words */
  at: number;
  /** the newest label given in it */
  newest: number;
  monoAt: number;
  byMs: number;
}

export class TimeLabels {
  /** the newest label given in trusted time */
  private lastLabel = -Infinity;
  private seen: { wall: number; mono: number } | null = null;
  /** the last look at which the wall clock was trusted: the line a glitch is measured against */
  private trusted: { wall: number; mono: number } | null = null;
  private held: Held | null = null;
  private withdrawn: { from: number; to: number; returnedTo: number; monoAt: number } | null = null;
  private epochNo = 0;
  private synced: boolean | null = null;
  private refusing: 'implausible' | 'behind' | null = null;
  private readonly steps: ClockStep[] = [];
  /** polls whose readings were not recorded because the clock could not label them */
  unlabelled = 0;
  /** held runs withdrawn (forward steps undone) and confirmed */
  withdrawals = 0;
  confirmations = 0;

  constructor(private readonly o: TimeLabelsOptions) {}

  /** Compares the clocks since the last look; the step, if there was one. */
  observe(): ClockStep | null {
    const { clock } = this.o;
    const wall = clock.now();
    const mono = clock.mono();
    const before = this.seen;
    const wasSynced = this.synced;
    this.synced = this.o.synchronised?.() ?? null;
    this.seen = { wall, mono };
    const threshold = STEP_THRESHOLD_MS * clock.speed;
    if (!before) {
      const line = this.o.startLine;
      if (line != null && this.plausible(line) && this.plausible(wall) && wall > line + threshold) {
        // started ahead of where the last run's line is now: a forward step made while it was down
        this.trusted = { wall: line, mono };
        this.hold(wall, mono, wall - line);
      } else if (this.plausible(wall)) this.trustLine(wall, mono);
      return null;
    }
    const byMs = wall - before.wall - (mono - before.mono);
    const step = Math.abs(byMs) < threshold ? null : { at: wall, byMs, monoAt: mono };
    if (step) {
      this.steps.push(step);
      if (this.steps.length > 8) this.steps.shift();
      this.o.onStep?.(step);
    }
    const firstSync = wasSynced === false && this.synced === true;
    if (this.held) {
      // where the wall clock would be had the step been a glitch
      const line = this.expected(mono);
      if (step && step.byMs < 0 && wall <= line + threshold) {
        this.withdraw(wall);
        this.trustLine(wall, mono);
      } else if (step && step.byMs < 0) {
        // back, but still ahead of the line: what was labelled after this time is in its future
        this.withdraw(wall);
        this.hold(wall, mono, wall - line);
      } else if (step) {
        // further forward: a time less likely still; it waits afresh
        this.held.monoAt = mono;
        this.held.byMs = wall - line;
        this.held.at = wall;
      } else if (firstSync || (mono - this.held.monoAt) / clock.speed >= (this.o.confirmMs ?? CONFIRM_MS))
        this.confirm(wall, mono);
    } else if (step && step.byMs > 0 && this.trusted && this.plausible(before.wall) && !firstSync) {
      this.hold(wall, mono, byMs);
    } else if (this.plausible(wall)) {
      // a step taken as it is (back, NTP's first synchronisation, from an implausible clock) moves the line
      if (step || !this.trusted) this.trustLine(wall, mono);
      else this.trusted = { wall, mono };
    }
    return step;
  }

  private trustLine(wall: number, mono: number): void {
    this.trusted = { wall, mono };
    this.o.onTrusted?.(wall);
  }

  private expected(mono: number): number {
    const t = this.trusted!;
    return t.wall + (mono - t.mono);
  }

  private hold(wall: number, mono: number, byMs: number): void {
    const threshold = STEP_THRESHOLD_MS * this.o.clock.speed;
    this.held = { from: this.expected(mono) + threshold, at: wall, newest: -Infinity, monoAt: mono, byMs };
  }

  private withdraw(wall: number): void {
    const h = this.held!;
    this.held = null;
    this.epochNo++;
    this.withdrawals++;
    const from = Math.min(h.at, h.newest);
    this.withdrawn = { from, to: Math.max(h.at, h.newest), returnedTo: wall, monoAt: this.o.clock.mono() };
    this.o.onHeld?.({ kind: 'withdrawn', from, to: this.withdrawn.to, returnedTo: wall });
  }

  private confirm(wall: number, mono: number): void {
    const h = this.held!;
    this.held = null;
    this.confirmations++;
    this.trustLine(wall, mono);
    this.lastLabel = Math.max(this.lastLabel, h.newest);
    this.o.onHeld?.({ kind: 'confirmed', from: h.at });
  }

  /** Whether the wall clock can be right at all (not before the build). */
  plausible(wall = this.o.clock.now()): boolean {
    return wall >= this.o.notBefore;
  }

  /** The earliest label that may be given next (inclusive). */
  floor(): number {
    return Math.max(this.lastLabel, this.held?.newest ?? -Infinity, this.o.newestStored());
  }

  /** Labels from this time on are held (a forward step not yet confirmed); null when none are. */
  heldFrom(): number | null {
    return this.held?.from ?? null;
  }

  /** Whether `at` lies after what the trusted clock reads now by more than a step: labelled in a time since undone. */
  future(at: number): boolean {
    return this.held === null && at > this.closingNow() + STEP_THRESHOLD_MS * this.o.clock.speed;
  }

  /** Whether readings with this label may still be published: a held run not withdrawn since. */
  current(label: Label): boolean {
    return label.ok && (!label.held || label.epoch === this.epochNo);
  }

  /**
   * The wall time buckets may be closed up to: while a forward step is held, the line the
   * monotonic clock kept from the last trusted time, so nothing labelled in the stepped-to time
   * is closed (stored, served, sent) before it is confirmed.
   */
  closingNow(): number {
    this.observe();
    return this.held && this.trusted
      ? Math.min(this.o.clock.now(), this.expected(this.o.clock.mono()))
      : this.o.clock.now();
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
    const held = this.held !== null && at >= this.held.from;
    if (held) this.held!.newest = Math.max(this.held!.newest, at);
    else this.lastLabel = at;
    return { ok: true, at, held, epoch: this.epochNo };
  }

  /** What the daemon trusts for time now, one sentence for health. */
  trust(): string {
    const ntp =
      this.synced === true ? 'NTP-synchronised' : this.synced === false ? 'not NTP-synchronised' : 'NTP state unknown';
    if (this.refusing === 'implausible') return `nothing: the wall clock is before this build (${ntp})`;
    if (this.held) return `the monotonic clock from the last trusted time: a forward step awaits confirmation (${ntp})`;
    return `the wall clock, checked against the monotonic clock (${ntp})`;
  }

  /** Sentences for health: a recent step, held or withdrawn labels, and why readings are not recorded now. */
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
    if (this.held) {
      const mins = Math.round((this.o.confirmMs ?? CONFIRM_MS) / 60_000);
      out.push(
        `the wall clock stepped forward by ${Math.round(this.held.byMs / 1000)} s to ${iso(this.held.at)}: readings since are held (not stored, served or sent) until that time has held for ${mins} min or NTP confirms it; a step back withdraws them`,
      );
    }
    const w = this.withdrawn;
    if (w && (mono - w.monoAt) / clock.speed <= STEP_SHOWN_MS)
      out.push(
        `a forward clock step was undone: readings labelled ${iso(w.from)} to ${iso(w.to)} were withdrawn (never stored or sent); recording went on from ${iso(w.returnedTo)}`,
      );
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
