/** The site.yaml `sitegw setup` writes from scans of several buses and the installer's choices. */
import { describe, expect, it } from 'vitest';
import type { ScanFinding, ScanResult } from '../../src/discovery/scan.js';
import type { ScanLink } from '../../src/discovery/scan-report.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { mergeBuses, proposedDevices, siteYamlText, withChoice } from '../../src/setup/site-yaml.js';

const finding = (unitId: number, models: number[], roles: ScanFinding['roles'], model: string): ScanFinding => ({
  unitId,
  family: 'sunspec',
  profile: 'sunspec',
  identity: { manufacturer: 'Acme', model, serial: `S${unitId}` },
  models,
  roles,
  alsoAt: [],
});
const result = (found: ScanFinding[]): ScanResult => ({
  found,
  silent: [],
  unknown: [],
  failed: [],
  requests: 9,
  answered: [],
});
const tcp = (port: number): ScanLink => ({ type: 'tcp', host: '192.168.1.50', port });
const bus = () =>
  result([finding(1, [1, 103], ['inverter'], 'INV'), finding(2, [1, 203], ['grid-meter', 'consumption-meter'], 'M')]);

const SITE = {
  siteId: 'home',
  siteName: 'Miller\'s "home": #1',
  timezone: 'Europe/Berlin',
  currency: 'EUR',
  latitude: 52.5,
  longitude: 13.4,
  httpHost: '0.0.0.0',
  httpPort: 8080,
  dataDir: '/var/lib/sitegw',
};

describe('setup site.yaml', () => {
  it('takes each device of the scan snippet with its comment, id, role and profile', () => {
    const devices = proposedDevices(bus(), tcp(502));
    expect(devices.map((d) => [d.id, d.role, d.profile])).toEqual([
      ['inverter-1', 'inverter', 'sunspec'],
      ['meter-2', 'grid-meter', 'sunspec'],
    ]);
    expect(devices[0]!.notes[0]).toBe('unit 1: Acme INV, serial S1, SunSpec models 1, 103');
  });

  it('makes ids unique across buses and proposes one grid meter per site', () => {
    const merged = mergeBuses([proposedDevices(bus(), tcp(502)), proposedDevices(bus(), tcp(1502))]);
    expect(merged.map((d) => [d.id, d.role])).toEqual([
      ['inverter-1', 'inverter'],
      ['meter-2', 'grid-meter'],
      ['inverter-1-b2', 'inverter'],
      ['meter-2-b2', 'consumption-meter'],
    ]);
    expect(merged[3]!.lines).toContain('    role: consumption-meter');
    expect(merged[2]!.lines[0]).toBe('  - id: inverter-1-b2');
  });

  it('writes a file check-config accepts, the name quoted, the choices in it', () => {
    const merged = mergeBuses([proposedDevices(bus(), tcp(502)), proposedDevices(bus(), tcp(1502))]);
    const devices = merged.map((d, i) => (i === 3 ? withChoice(d, 'consumption-meter', 'house') : d));
    const text = siteYamlText(SITE, devices, ['192.168.1.50:502', '192.168.1.50:1502'], '2026-11-27');
    const r = parseConfig(text, 'site.yaml', '/etc/sitegw');
    if (!r.ok) throw new Error(`${text}\n${JSON.stringify(r.errors, null, 2)}`);
    expect(r.config.site.name).toBe(SITE.siteName);
    expect(r.config.devices.map((d) => [d.id, d.role])).toEqual([
      ['inverter-1', 'inverter'],
      ['meter-2', 'grid-meter'],
      ['inverter-1-b2', 'inverter'],
      ['house', 'consumption-meter'],
    ]);
    expect(text).toContain('# unit 2: Acme M, serial S2, SunSpec models 1, 203');
  });
});
