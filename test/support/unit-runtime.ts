/**
 * The node flags and environment systemd/sitegw.service starts the gateway with, read from its
 * ExecStart= and Environment= lines, so benchmarks and the crash suite run the daemon the way a
 * Pi does. BENCH_NODE_ARGS overrides the flags ("" for node's defaults).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const UNIT = join(fileURLToPath(new URL('../..', import.meta.url)), 'systemd/sitegw.service');

export function unitRuntime(): { args: string[]; env: Record<string, string> } {
  const unit = readFileSync(UNIT, 'utf8');
  const exec = /^ExecStart=\S+\s+(.*?)\s*\S*dist\/cli\.js/m.exec(unit);
  if (!exec) throw new Error('systemd/sitegw.service: no ExecStart= running dist/cli.js');
  const env: Record<string, string> = {};
  for (const m of unit.matchAll(/^Environment=(\w+)=(\S*)/gm)) env[m[1]!] = m[2]!;
  const override = process.env.BENCH_NODE_ARGS;
  return { args: (override ?? exec[1]!).split(/\s+/).filter(Boolean), env };
}

/**
 * The daemon's resident memory, MiB, that no attack from the LAN may take it past
 * (docs/security.md "Bounded work and memory"), under the unit's flags and a 256 MB heap. Node
 * 24's is higher: its process is ~13 MB larger at idle (bench/README.md "Footprint") and under
 * 32 unread ~8 MB answers it peaked at 184–221 MiB at five commits of 2026-12-02/03 with no step
 * between them (test/attack/hostile-lan), where Node 20 and 22 stay at 168–177.
 */
export const RSS_BOUND_MIB = Number(process.versions.node.split('.')[0]) >= 24 ? 240 : 200;

/** A child's resident memory, MiB (Linux /proc), to hold against RSS_BOUND_MIB. */
export function rssMib(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}
