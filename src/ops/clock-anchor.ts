/**
 * The clock rules' memory across restarts (core/time-labels.ts): the last trusted wall time and
 * the kernel's monotonic clock (CLOCK_MONOTONIC, which runs on across process restarts, not
 * across reboots) at that moment, in `clock-anchor` beside the database. A restart in the same
 * boot knows where the wall clock should read now; one that finds it far ahead (a SIGKILL or a
 * watchdog restart inside a forward glitch) holds it as a forward step, as if it had run through
 * it. Written only when the trusted line moves (a start, a step taken, a step confirmed or
 * undone): a few small writes a day at most.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** ms on CLOCK_MONOTONIC (process.hrtime: libfaketime leaves it alone, so does NTP) */
export const kernelMonoMs = (): number => Number(process.hrtime.bigint() / 1_000_000n);

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

export class ClockAnchor {
  private readonly boot = bootId();

  constructor(private readonly file: string) {}

  /** Where the wall clock should read now by the last run's trusted line; null without one from this boot. */
  expectedNow(): number | null {
    if (!this.boot) return null;
    try {
      const a = JSON.parse(readFileSync(this.file, 'utf8')) as { boot?: unknown; wall?: unknown; mono?: unknown };
      if (a.boot !== this.boot || typeof a.wall !== 'number' || typeof a.mono !== 'number') return null;
      const elapsed = kernelMonoMs() - a.mono;
      return elapsed >= 0 ? a.wall + elapsed : null;
    } catch {
      return null;
    }
  }

  /** Keeps `wall` as trusted now; a disk that refuses it only costs this safeguard. */
  save(wall: number): void {
    if (!this.boot) return;
    try {
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, JSON.stringify({ boot: this.boot, wall, mono: kernelMonoMs() }));
      renameSync(tmp, this.file);
    } catch {
      // full or read-only (health says so through the other writes): a line left from before
      // would hold a right clock at the next start, so it goes; none is as good as a start without one
      for (const f of [this.file, `${this.file}.tmp`]) {
        try {
          rmSync(f, { force: true });
        } catch {
          // a read-only directory keeps it: the next start may hold a right clock for its wait
        }
      }
    }
  }
}
