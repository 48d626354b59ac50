/**
 * Debian's chromium, headless, driven by playwright-core (no browser download) for the status
 * page's browser tests. A test that needs it skips with a warning where it is missing; CI
 * installs it (.ci/run).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

export function warnWithoutChromium(test: string): void {
  if (!HAVE_CHROMIUM)
    console.warn(`SKIPPED: ${test} needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
