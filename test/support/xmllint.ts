/** xmllint (Debian libxml2-utils) validates IEEE 2030.5 bodies (src/gridop/validate.ts); .ci/run installs it. */
import { spawnSync } from 'node:child_process';

export const HAVE_XMLLINT = !spawnSync('xmllint', ['--version']).error;
if (!HAVE_XMLLINT)
  console.warn('\n*** xmllint is not installed: the grid-operator tests that need it are SKIPPED ***\n');
