/**
 * What `sitegw scan` prints: one line per device found, what did not answer and why, and a
 * site.yaml snippet with the devices ready to paste (roles to check). Text that comes from the
 * devices (manufacturer, model, serial) is shown only after its control characters are removed,
 * so a device cannot write escape sequences to the installer's terminal or break the YAML.
 */
import type { DeviceRole } from '../core/device-role.js';
import { chainMeters, type ScanFinding, type ScanResult } from './scan.js';

export type ScanLink =
  | { type: 'tcp'; host: string; port: number }
  | { type: 'rtu'; device: string; baudRate: number; parity: 'none' | 'even' | 'odd'; stopBits: 1 | 2 };

/** device text made safe to print and to put in a YAML comment */
export function shown(v: string | undefined, max = 40): string {
  if (v === undefined) return '';
  // eslint-disable-next-line no-control-regex
  const clean = v.replace(/[\u0000-\u001f\u007f-\u009f#]/g, '?').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** '3-6, 9' from [3,4,5,6,9] */
export function ranges(units: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < units.length; ) {
    let j = i;
    while (j + 1 < units.length && units[j + 1] === units[j]! + 1) j++;
    out.push(i === j ? `${units[i]}` : `${units[i]}-${units[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

const SIGN_WORDS = { 'import-positive': '+ import', 'export-positive': '+ export' } as const;

/** "maker model, serial …" of a device's identity, its text made safe */
function named(id: ScanFinding['identity']): string {
  const name = [shown(id.manufacturer), shown(id.model)].filter(Boolean).join(' ') || '(no name given)';
  return `${name}, ${id.serial ? `serial ${shown(id.serial)}` : 'no serial'}`;
}

function what(f: ScanFinding): string {
  const alt = f.alternatives?.length ? ` (also matches ${f.alternatives.join(', ')})` : '';
  const how = f.family === 'sunspec' ? `SunSpec models ${(f.models ?? []).join(', ')}` : `profile ${f.profile}${alt}`;
  const sign = f.meterSign
    ? `, meter power read as ${SIGN_WORDS[f.meterSign.sign]}${f.meterSign.source ? ` (${f.meterSign.source})` : ''}`
    : '';
  return `${named(f.identity)}, ${how}${sign}`;
}

/** a profile the SunSpec unit also answers, as the found line names it */
function besideWhat(b: NonNullable<ScanFinding['beside']>[number]): string {
  return `${named(b.identity)}, profile ${b.profile} (${b.roles.join(', ')})`;
}

/** Role per finding: one grid-meter per site, so meters after the first are consumption meters. */
function assignRoles(found: readonly ScanFinding[]): (DeviceRole | undefined)[] {
  let gridTaken = false;
  return found.map((f) => {
    const role = f.roles.find((r) => r !== 'grid-meter' || !gridTaken) ?? f.roles[0];
    if (role === 'grid-meter') gridTaken = true;
    return role;
  });
}

const ID_WORD: Record<DeviceRole, string> = {
  inverter: 'inverter',
  battery: 'battery',
  'grid-meter': 'meter',
  'consumption-meter': 'meter',
};

function connection(link: ScanLink, unitId: number): string {
  return link.type === 'tcp'
    ? `{ type: tcp, host: ${link.host}, port: ${link.port}, unitId: ${unitId} }`
    : `{ type: rtu, device: ${link.device}, baudRate: ${link.baudRate}, parity: ${link.parity}, stopBits: ${link.stopBits}, unitId: ${unitId} }`;
}

/**
 * The meters of an inverter's chain as their own entries on the same unit, the first at the grid
 * connection point unless one is taken already.
 */
function chainEntries(f: ScanFinding, link: ScanLink, gridTaken: boolean): { lines: string[]; tookGrid: boolean } {
  const lines: string[] = [];
  let tookGrid = false;
  for (const m of chainMeters(f.models ?? [])) {
    const role: DeviceRole = gridTaken || tookGrid ? 'consumption-meter' : 'grid-meter';
    if (role === 'grid-meter') tookGrid = true;
    lines.push(
      `  # unit ${f.unitId}, model ${m.model} in the inverter's chain: a meter of its own${m.sunspecMeter ? ` (meter ${m.sunspecMeter})` : ''}`,
    );
    lines.push(`  - id: meter-${f.unitId}${m.sunspecMeter ? `-${m.sunspecMeter}` : ''}`);
    lines.push(`    role: ${role}  # or ${role === 'grid-meter' ? 'consumption-meter' : 'grid-meter'}`);
    lines.push('    profile: sunspec');
    if (m.sunspecMeter) lines.push(`    sunspecMeter: ${m.sunspecMeter}`);
    if (f.meterSign?.sign === 'export-positive') lines.push('    meterSign: export-positive');
    lines.push(`    connection: ${connection(link, f.unitId)}`);
  }
  if (f.chainBattery) {
    lines.push(
      `  # unit ${f.unitId}, 124 and 160's storage modules in the inverter's chain: its battery (SunSpec storage), a device of its own`,
    );
    lines.push(`  - id: battery-${f.unitId}`, '    role: battery', '    profile: sunspec');
    lines.push(`    connection: ${connection(link, f.unitId)}`);
  }
  return { lines, tookGrid };
}

/** The devices found as site.yaml `devices:` entries. */
export function siteYamlSnippet(result: ScanResult, link: ScanLink): string {
  const roles = assignRoles(result.found);
  let gridTaken = roles.includes('grid-meter');
  const lines = ['devices:'];
  result.found.forEach((f, i) => {
    const role = roles[i];
    lines.push(`  # unit ${f.unitId}: ${what(f)}`);
    if (f.alsoAt.length > 0)
      lines.push(
        `  # the same device also answered on unit ids ${ranges(f.alsoAt)}: it ignores the unit id; list it once`,
      );
    if (!role)
      lines.push('  # none of the roles sitegw reads fits these models: set role by hand or leave the device out');
    if (f.alternatives?.length)
      lines.push(
        `  # its identity registers also fit profile ${f.alternatives.join(', ')}: keep the one on the device's label`,
      );
    lines.push(`  - id: ${ID_WORD[role ?? 'inverter']}-${f.unitId}`);
    const others = f.roles.filter((r) => r !== role);
    lines.push(`    role: ${role ?? 'inverter'}${others.length > 0 ? `  # or ${others.join(', ')}` : ''}`);
    lines.push(`    profile: ${f.profile}`);
    // the vendor's documented sign, written out so the installer sees it and can change it
    if (f.meterSign?.sign === 'export-positive' && (role === 'grid-meter' || role === 'consumption-meter'))
      lines.push(`    meterSign: export-positive`);
    lines.push(`    connection: ${connection(link, f.unitId)}`);
    const chain = chainEntries(f, link, gridTaken);
    lines.push(...chain.lines);
    gridTaken ||= chain.tookGrid;
    for (const b of f.beside ?? []) {
      // not the SunSpec device's own role: one device, two roles at one address
      const first =
        b.roles.find((r) => r !== role && (r !== 'grid-meter' || !gridTaken)) ??
        b.roles.find((r) => r !== role) ??
        b.roles[0]!;
      if (first === 'grid-meter') gridTaken = true;
      lines.push(`  # unit ${f.unitId}, next to its SunSpec map: ${besideWhat(b)}`);
      lines.push(`  - id: ${ID_WORD[first]}-${f.unitId}-${b.profile}`);
      const others = b.roles.filter((r) => r !== first);
      lines.push(`    role: ${first}${others.length > 0 ? `  # or ${others.join(', ')}` : ''}`);
      lines.push(`    profile: ${b.profile}`);
      lines.push(`    connection: ${connection(link, f.unitId)}`);
    }
  });
  return `${lines.join('\n')}\n`;
}

export function formatScanReport(result: ScanResult, link: ScanLink): string {
  const out: string[] = [];
  const n = result.found.length;
  out.push(n === 0 ? 'No device found.' : `Found ${n} device${n === 1 ? '' : 's'}:`);
  for (const f of result.found) {
    out.push(`  unit ${String(f.unitId).padEnd(3)}  ${what(f)}`);
    if (f.alsoAt.length > 0)
      out.push(`            answers on unit ids ${ranges(f.alsoAt)} too (it ignores the unit id)`);
    for (const b of f.beside ?? []) out.push(`            and next to its SunSpec map: ${besideWhat(b)}`);
  }
  for (const u of result.unknown)
    out.push(
      `  unit ${String(u.unitId).padEnd(3)}  answers, but is not SunSpec and matches no device profile: not supported (${shown(u.reason, 120)})`,
    );
  for (const u of result.failed) {
    const hint =
      u.error.kind === 'crc' ? ' — garbled answers: check baud rate, parity, A/B wiring and termination' : '';
    out.push(`  unit ${String(u.unitId).padEnd(3)}  ${u.error.kind}: ${shown(u.error.message, 120)}${hint}`);
  }
  if (result.silent.length > 0)
    out.push(`No answer from unit id${result.silent.length === 1 ? '' : 's'} ${ranges(result.silent)}.`);
  out.push(`${result.requests} requests sent.`);
  if (result.unknown.length > 0)
    out.push(
      '',
      // never a guess: a device read through another family's map reports wrong numbers with confidence
      'A device that matches no profile is not read: sitegw never guesses its register map. To add its family,',
      'write a device profile (a YAML file in device-profiles/, no code) from its register document, as',
      'docs/device-profiles.md "Adding a profile" shows, then run sitegw scan again.',
    );
  if (n > 0) {
    out.push('', 'site.yaml snippet (check each role; ids are suggestions):', '', siteYamlSnippet(result, link));
  } else if (result.failed.some((f) => f.error.kind === 'crc')) {
    out.push(
      '',
      'Garbled answers mean a device is there but the line settings or wiring differ: try other --baud and --parity values.',
    );
  }
  return `${out.join('\n')}\n`;
}
