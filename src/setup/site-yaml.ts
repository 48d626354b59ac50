/**
 * The site.yaml `sitegw setup` and the first-run page (src/api/http/onboarding.ts) write: the installer's answers with a comment per section, and
 * the devices the scan proposed (src/discovery/scan-report.ts writes them, comments included), each
 * with the role and id the installer confirmed or changed.
 */
import { readFileSync } from 'node:fs';
import { DEVICE_ROLES, type DeviceRole } from '../core/device-role.js';
import type { ScanResult } from '../discovery/scan.js';
import { type ScanLink, siteYamlSnippet } from '../discovery/scan-report.js';

/** One proposed device: its lines in the snippet (comments first), and the id and role in them. */
export interface ProposedDevice {
  id: string;
  role: DeviceRole;
  profile: string;
  /** the comment lines the scan wrote above it, without the '#' */
  notes: string[];
  lines: string[];
}

const ID_LINE = /^ {2}- id: (\S+)$/;
const ROLE_LINE = /^ {4}role: (\S+)/;
const PROFILE_LINE = /^ {4}profile: (\S+)/;

/** The snippet's entries, one per device, in the order the scan found them. */
export function proposedDevices(result: ScanResult, link: ScanLink): ProposedDevice[] {
  const out: ProposedDevice[] = [];
  let notes: string[] = [];
  let current: ProposedDevice | undefined;
  for (const line of siteYamlSnippet(result, link).split('\n').slice(1)) {
    if (line.startsWith('  #')) {
      notes.push(line.slice(3).trim());
      current = undefined;
      continue;
    }
    const id = ID_LINE.exec(line)?.[1];
    if (id !== undefined) {
      current = { id, role: 'inverter', profile: '', notes, lines: [line] };
      notes = [];
      out.push(current);
      continue;
    }
    if (!current || line === '') continue;
    current.lines.push(line);
    const role = ROLE_LINE.exec(line)?.[1];
    if (role !== undefined)
      current.role = (DEVICE_ROLES as readonly string[]).includes(role) ? (role as DeviceRole) : 'inverter';
    const profile = PROFILE_LINE.exec(line)?.[1];
    if (profile !== undefined) current.profile = profile;
  }
  return out;
}

/**
 * Devices from several buses in one list: ids made unique (the second bus's `inverter-1` becomes
 * `inverter-1-b2`), and one grid meter per site, so a later bus's proposed grid meter becomes a
 * consumption meter (the installer can swap them at the role question).
 */
export function mergeBuses(buses: ProposedDevice[][]): ProposedDevice[] {
  const ids = new Set<string>();
  let grid = false;
  const out: ProposedDevice[] = [];
  buses.forEach((devices, b) => {
    for (const d of devices) {
      let id = d.id;
      if (ids.has(id)) id = `${d.id}-b${b + 1}`;
      for (let n = 2; ids.has(id); n++) id = `${d.id}-b${b + 1}-${n}`;
      ids.add(id);
      const role = d.role === 'grid-meter' && grid ? 'consumption-meter' : d.role;
      if (role === 'grid-meter') grid = true;
      out.push(withChoice(d, role, id));
    }
  });
  return out;
}

/** The device with another role and id; its lines say so. */
export function withChoice(d: ProposedDevice, role: DeviceRole, id: string): ProposedDevice {
  const lines = d.lines.map((l) => {
    if (ID_LINE.test(l)) return `  - id: ${id}`;
    if (ROLE_LINE.test(l) && role !== d.role) return `    role: ${role}`;
    return l;
  });
  return { ...d, id, role, lines };
}

/** The first line of the package's placeholder site.yaml: the site is not configured yet. */
export const UNCONFIGURED_MARK = '# sitegw: not configured yet';

/** The placeholder's text when `file` is the package's placeholder, else null. */
export function unconfigured(file: string): string | null {
  try {
    const text = readFileSync(file, 'utf8');
    return text.startsWith(UNCONFIGURED_MARK) ? text : null;
  } catch {
    return null;
  }
}

export interface SiteAnswers {
  siteId: string;
  siteName: string;
  timezone: string;
  currency: string;
  latitude: number;
  longitude: number;
  httpHost: string;
  httpPort: number;
  dataDir: string;
}

/** A YAML double-quoted scalar: JSON's string syntax is YAML's. */
const quoted = (s: string): string => JSON.stringify(s);

export function siteYamlText(
  a: SiteAnswers,
  devices: ProposedDevice[],
  buses: string[],
  when: string,
  by = "'sitegw setup'",
): string {
  const lan = a.httpHost !== '127.0.0.1' && a.httpHost !== 'localhost' && a.httpHost !== '::1';
  return [
    `# site.yaml written by ${by} on ${when}.`,
    '# Every key is explained in docs/configuration.md. After a change: sitegw check-config <this file>',
    '# and restart the service (systemctl restart sitegw).',
    'version: 1',
    '',
    'site:',
    '  # the root of every stream id partners see: do not change it after go-live',
    `  id: ${a.siteId}`,
    `  name: ${quoted(a.siteName)}`,
    '  # daily and monthly buckets start at local midnight in this IANA time zone',
    `  timezone: ${a.timezone}`,
    `  currency: ${a.currency}`,
    '  # decimal degrees, north and east positive',
    `  location: { latitude: ${a.latitude}, longitude: ${a.longitude} }`,
    '',
    'http:',
    lan
      ? '  # every address of the box: HTTPS with a self-signed certificate (sitegw tls fingerprint)'
      : '  # this box only; 0.0.0.0 serves the status page and partners on the LAN (over HTTPS)',
    `  host: ${a.httpHost}`,
    `  port: ${a.httpPort}`,
    '',
    '# the folder of sitegw.db, the API key material and the certificate',
    `dataDir: ${a.dataDir}`,
    '',
    `# found by the scan of ${buses.join(', ')}; roles and ids as confirmed at setup`,
    'devices:',
    ...devices.flatMap((d) => [...d.notes.map((n) => `  # ${n}`), ...d.lines]),
    '',
  ].join('\n');
}
