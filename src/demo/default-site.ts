import type { SiteConfig } from '../config/types.js';
import { CONFIG_VERSION } from '../config/version.js';
import { parseConfig } from '../profiles/site-config.js';
import { formatConfigErrors } from '../yaml/format.js';

/**
 * The demo's export limit, W: a connection agreement's cap (docs/limits.md), held at the grid meter
 * by curtailing the simulated inverter through SunSpec 704 once the battery is full, about noon on a
 * sunny day. The demo's 6 kW array exports up to about 5 kW then.
 */
export const DEMO_EXPORT_LIMIT_W = 3000;

export interface DemoEndpoints {
  inverter: { host: string; port: number };
  meter: { host: string; port: number };
}

/**
 * The embedded default site: the built-in simulator's devices, as an installer would write them
 * in site.yaml. It goes through the same validation as any site.yaml, so the demo cannot drift
 * from what the config schema accepts.
 */
export function demoSiteYaml(
  ep: DemoEndpoints,
  opts: {
    httpHost: string;
    httpPort: number;
    dataDir: string;
    pollSeconds: number;
    batteryBlocks: number;
    uplinkUrl?: string;
    homeassistantUrl?: string;
    /** default `demo-site`; validated as any site.id */
    siteId?: string;
    /** `limits.exportW`; absent: no limits section */
    exportLimitW?: number;
  },
): string {
  const batteries = Array.from(
    { length: opts.batteryBlocks },
    (_, j) => `
  - id: battery-${j + 1}
    name: Battery block ${j + 1}
    role: battery
    profile: sunspec
    inverter: inverter
    connection: { type: tcp, host: ${ep.inverter.host}, port: ${ep.inverter.port}, unitId: ${j + 2} }`,
  ).join('');
  return `# sitegw demo site: the built-in simulator
version: ${CONFIG_VERSION}
site:
  id: ${JSON.stringify(opts.siteId ?? 'demo-site')}
  name: Demo home (simulated)
  timezone: Europe/Berlin
  currency: EUR
  location: { latitude: 52.52, longitude: 13.40 }
http:
  host: ${opts.httpHost}
  port: ${opts.httpPort}
dataDir: ${JSON.stringify(opts.dataDir)}
poll:
  intervalSeconds: ${opts.pollSeconds}
${opts.uplinkUrl === undefined ? '' : `uplink:\n  url: ${JSON.stringify(opts.uplinkUrl)}\n`}${opts.homeassistantUrl === undefined ? '' : `homeassistant:\n  url: ${JSON.stringify(opts.homeassistantUrl)}\n`}# the demo's battery may be commanded (a real site starts with control off: docs/control.md)
control:
  enabled: true
${opts.exportLimitW === undefined ? '' : `# the connection's export limit, held at the grid meter by curtailing the inverter (docs/limits.md)\nlimits:\n  exportW: ${opts.exportLimitW}\n`}# a typical German time-of-use tariff, so /api/v2/sites/<site id>/savings answers out of the box
tariff:
  type: time-of-use
  periods:
    - { from: '07:00', to: '22:00', importPrice: 0.36, exportPrice: 0.08 }
    - { from: '22:00', to: '07:00', importPrice: 0.26, exportPrice: 0.08 }
devices:
  - id: inverter
    name: Hybrid inverter
    role: inverter
    profile: sunspec
    connection: { type: tcp, host: ${ep.inverter.host}, port: ${ep.inverter.port}, unitId: 1 }${batteries}
  - id: grid-meter
    name: Grid meter
    role: grid-meter
    profile: sunspec
    connection: { type: tcp, host: ${ep.meter.host}, port: ${ep.meter.port}, unitId: 1 }
  - id: house-meter
    name: House consumption meter
    role: consumption-meter
    profile: sunspec
    connection: { type: tcp, host: ${ep.meter.host}, port: ${ep.meter.port}, unitId: 2 }
`;
}

export function demoSiteConfig(...args: Parameters<typeof demoSiteYaml>): SiteConfig {
  const text = demoSiteYaml(...args);
  const result = parseConfig(text, 'demo site.yaml');
  if (!result.ok)
    throw new Error(`embedded demo site.yaml is invalid:\n${formatConfigErrors(result.errors, 'demo').join('\n')}`);
  return result.config;
}
