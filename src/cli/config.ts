/**
 * The one way a command reads site.yaml: the config, or its mistakes printed as `file:line:col path:
 * message — hint` with a count, and the exit code that tells a broken file from an unreadable one.
 */

import type { SiteConfig } from '../config/types.js';
import { loadConfig } from '../profiles/site-config.js';
import { formatConfigErrors } from '../yaml/format.js';
import { EXIT, type Output } from './output.js';

export type Loaded = { ok: true; config: SiteConfig } | { ok: false; exit: number };

export async function loadSiteConfig(file: string, io: Output): Promise<Loaded> {
  const result = await loadConfig(file);
  if (result.ok) return { ok: true, config: result.config };
  for (const line of formatConfigErrors(result.errors, file)) io.err(`${line}\n`);
  if (result.unreadable) return { ok: false, exit: EXIT.CONFIG_UNREADABLE };
  const n = result.errors.length;
  io.err(`${n} error${n === 1 ? '' : 's'} in ${file}\n`);
  return { ok: false, exit: EXIT.CONFIG_INVALID };
}
