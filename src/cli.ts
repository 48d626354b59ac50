#!/usr/bin/env node
/**
 * The `sitegw` program (package.json bin, dist/cli.js): the preflight first, so a Node or SQLite
 * driver the gateway cannot use ends with one line before any other module loads; then the commands
 * in src/cli/.
 */
import './preflight.js';
import { main } from './cli/index.js';
import { logDrained } from './core/log.js';

// the last log lines ("sitegw stopped") may still wait for a slow reader: a bounded wait for them
main(process.argv.slice(2)).then(async (code) => {
  await logDrained();
  process.exit(code);
});
