/**
 * The first run in the browser (docs/install.md "Setup in the browser"): while site.yaml is the
 * package's placeholder, `sitegw run` serves only a page that makes the site (src/api/http/
 * onboarding.ts). Whoever opens it must prove they may: the setup code, written at start to a
 * file only root and the service can read, so a neighbour on the LAN cannot claim the gateway.
 * The site the page sends becomes site.yaml through the same text `sitegw setup` writes
 * (site-yaml.ts) and the same checks as check-config (edit.ts).
 */
import { randomInt, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import type { DeviceRole } from '../core/device-role.js';
import { type ProposedDevice, type SiteAnswers, siteYamlText } from './site-yaml.js';

/** What the placeholder may say (YAML after its first line): where the page listens, where the data goes. */
export interface FirstRunPlace {
  httpHost: string;
  httpPort: number;
  dataDir: string;
}

/** The package's answers when the placeholder says nothing: every address of the box, the state directory. */
export const PACKAGE_PLACE: FirstRunPlace = { httpHost: '0.0.0.0', httpPort: 8443, dataDir: '/var/lib/sitegw' };

/** The placeholder's own keys over the package's; a key of the wrong type is the package's. */
export function firstRunPlace(text: string): FirstRunPlace {
  let doc: unknown;
  try {
    doc = parseDocument(text).toJS();
  } catch {
    doc = null;
  }
  const o = (doc && typeof doc === 'object' ? doc : {}) as {
    http?: { host?: unknown; port?: unknown };
    dataDir?: unknown;
  };
  const port = o.http?.port;
  return {
    httpHost: typeof o.http?.host === 'string' ? o.http.host : PACKAGE_PLACE.httpHost,
    httpPort:
      typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535 ? port : PACKAGE_PLACE.httpPort,
    dataDir: typeof o.dataDir === 'string' ? o.dataDir : PACKAGE_PLACE.dataDir,
  };
}

export const SETUP_CODE_FILE = 'setup-code';

/** nine digits in three groups: 30 bits, and a code that is read off a terminal and typed */
export function newSetupCode(): string {
  const d = String(randomInt(0, 1_000_000_000)).padStart(9, '0');
  return `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`;
}

/** Writes the code where only the service's user (and root) can read it; returns the file. */
export function saveSetupCode(dataDir: string, code: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o750 });
  const file = join(dataDir, SETUP_CODE_FILE);
  writeFileSync(file, `${code}\n`, { mode: 0o600 });
  return file;
}

/** The code as typed (spaces, dashes or none) against the one made; in constant time. */
export function sameCode(typed: unknown, code: string): boolean {
  if (typeof typed !== 'string') return false;
  const a = Buffer.from(typed.replace(/[\s-]/g, ''));
  const b = Buffer.from(code.replace(/-/g, ''));
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A device the page's scan proposed (src/setup/scan.ts), as the lines site-yaml.ts writes. */
export function proposedOf(
  device: Record<string, unknown> & { id: string; role: string; profile: string },
  note: string,
): ProposedDevice {
  const lines = stringify([device])
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`);
  return {
    id: device.id,
    role: device.role as DeviceRole,
    profile: device.profile,
    notes: note ? [note] : [],
    lines,
  };
}

/** The new site.yaml's text: the page's answers, the placeholder's place, the devices picked. */
export function firstSiteText(
  site: Omit<SiteAnswers, keyof FirstRunPlace>,
  place: FirstRunPlace,
  devices: ProposedDevice[],
  scanned: string[],
  when: string,
): string {
  return siteYamlText({ ...site, ...place }, devices, scanned, when, 'the first-run page');
}
