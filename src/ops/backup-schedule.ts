/**
 * The scheduled backups in the data directory (issue 41, finding 3): what a start on a damaged
 * database fills the salvage's gaps from (store/salvage.ts fillFromBackups), and what an installer
 * restores by hand (`sitegw restore`, docs/install.md "Backup and restore").
 *
 * - `backups/credentials.db`: the credentials file, once a day (a few KiB to a few hundred).
 * - `backups/sitegw.db`: the whole database with the credentials in it, once every
 *   max(1, ⌈size / BUDGET⌉) days, so the copies write at most BUDGET a day on average whatever the
 *   history's size. History older than the copy does not change, so an older copy still fills most
 *   of what a damaged page took (bench/backup-budget.ts, bench/README.md "SD card: backups").
 *
 * Each copy is SQLite's online backup from a second, read-only connection (ops/backup.ts), checked,
 * then renamed over the last one: a kill leaves the old copy or the new, never half of one. Its age
 * is the file's mtime, so a crash loop of short lives does not copy again at every start. A copy
 * the disk refuses (full, read-only) is logged once and tried at the next look.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { FeatureHealth } from '../core/feature.js';
import { BACKUP_DIR } from '../store/salvage.js';
import { isStorageFault } from '../store/storage-faults.js';
import { backupDatabase } from './backup.js';

/** bytes a day the whole-database copies may write on average */
export const BUDGET_BYTES_PER_DAY = 1024 * 1024;
const DAY_MS = 86_400_000;
/** how often the copies' ages are looked at, real ms */
const LOOK_MS = 3_600_000;

/** Days between whole-database copies of a database of `bytes`. */
export function daysBetweenCopies(bytes: number, budget = BUDGET_BYTES_PER_DAY): number {
  return Math.max(1, Math.ceil(bytes / budget));
}

export interface ScheduledBackupOptions {
  dbFile: string;
  log: Logger;
  /** real ms before the first look (default a minute: the start's own work first) */
  firstLookMs?: number;
  /** real wall-clock ms, for the copies' ages (tests move it) */
  now?: () => number;
}

export class ScheduledBackup {
  readonly name = 'backups';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private refused: string | null = null;

  constructor(private readonly o: ScheduledBackupOptions) {}

  get dir(): string {
    return join(dirname(this.o.dbFile), BACKUP_DIR);
  }

  start(): void {
    const tick = (ms: number) => {
      this.timer = setTimeout(() => {
        this.running ??= this.look().finally(() => {
          this.running = null;
        });
        if (this.timer) tick(LOOK_MS);
      }, ms);
      this.timer.unref();
    };
    tick(this.o.firstLookMs ?? 60_000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Copies what is due; the scheduled look, and tests. */
  async look(): Promise<void> {
    const now = (this.o.now ?? Date.now)();
    const { dbFile, log } = this.o;
    const age = (f: string) => (existsSync(f) ? now - statSync(f).mtimeMs : Number.POSITIVE_INFINITY);
    const cred = join(this.dir, 'credentials.db');
    const whole = join(this.dir, 'sitegw.db');
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      if (age(cred) >= DAY_MS) await backupDatabase(dbFile, cred, { replace: true, credentialsOnly: true });
      const due = daysBetweenCopies(statSync(dbFile).size) * DAY_MS;
      if (age(whole) >= due) {
        const r = await backupDatabase(dbFile, whole, { replace: true });
        log.info({ file: r.file, bytes: r.bytes, everyDays: due / DAY_MS }, 'scheduled backup written');
      }
      if (this.refused) log.info({ dir: this.dir }, 'scheduled backups written again');
      this.refused = null;
    } catch (err) {
      // a disk that takes no writes is health's already (ops/data-disk.ts): said once, not twice
      if (isStorageFault(err)) {
        log.warn({ err, dir: this.dir }, 'the scheduled backup waits for a disk that takes writes');
        return;
      }
      if (!this.refused) log.error({ err, dir: this.dir }, 'the scheduled backup failed; tried again within the hour');
      this.refused = err instanceof Error ? err.message : String(err);
    }
  }

  health(): FeatureHealth {
    return this.refused ? { problems: [`the scheduled backup in ${this.dir} failed: ${this.refused}`] } : {};
  }
}
