/**
 * Small state files kept beside the database (the uplink's seq ceiling, the grid operator's last
 * controls): written so a power cut leaves the old file or the new one, never half of one.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

/** Writes `text` to a new file, syncs it, then renames it over `file`. */
export function writeDurably(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
