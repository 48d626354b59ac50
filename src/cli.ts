#!/usr/bin/env node
/**
 * The `sitegw` program (package.json bin, dist/cli.js): the preflight first, so a Node or SQLite
 * driver the gateway cannot use ends with one line before any other module loads; then the commands
 * in src/cli/.
 */
import './preflight.js';
import { main } from './cli/index.js';

main(process.argv.slice(2)).then((code) => process.exit(code));
