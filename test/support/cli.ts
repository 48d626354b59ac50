/**
 * `sitegw …` from source as a child process: node itself with tsx's loader, not the tsx launcher,
 * so signals reach the CLI and a SIGKILL leaves no orphan daemon behind (the launcher is a parent
 * of its own; killing it left daemons running past the test). process.execPath keeps the child on
 * the Node that runs the suite, so CI's Node 24 run tests the CLI on 24.
 */
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** The command and arguments for spawn/spawnSync: `spawn(...sitegwCommand(['run', ...]), opts)`. */
export function sitegwCommand(args: readonly string[]): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args]];
}
