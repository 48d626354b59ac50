/**
 * A site.yaml for a test's own devices on loopback: the site block every such test shares, the
 * API on a free port, and what the test adds (devices, poll, control, uplink). It goes through
 * parseConfig like an installer's file, so a test cannot start a daemon on a config the gateway
 * would refuse, and a mistake reads as the installer would see it.
 */
import { stringify } from 'yaml';
import type { SiteConfig } from '../../src/config/types.js';
import { CONFIG_VERSION } from '../../src/config/version.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { formatConfigErrors } from '../../src/yaml/format.js';

export interface FixtureSite {
  id: string;
  name: string;
  dataDir: string;
  devices: unknown[];
  /** any other top-level keys: poll, control, uplink, … */
  more?: Record<string, unknown>;
}

/** The site.yaml text. */
export function fixtureSiteYaml(s: FixtureSite): string {
  return stringify({
    version: CONFIG_VERSION,
    site: {
      id: s.id,
      name: s.name.slice(0, 100),
      timezone: 'Europe/Berlin',
      currency: 'EUR',
      location: { latitude: 52.52, longitude: 13.4 },
    },
    http: { host: '127.0.0.1', port: 0 },
    dataDir: s.dataDir,
    poll: { intervalSeconds: 10 },
    ...s.more,
    devices: s.devices,
  });
}

/** The validated config, or an error listing the file's mistakes with line and hint. */
export function fixtureSiteConfig(s: FixtureSite): SiteConfig {
  const parsed = parseConfig(fixtureSiteYaml(s), `${s.id} site.yaml`);
  if (!parsed.ok)
    throw new Error(`${s.id}: site.yaml is invalid:\n${formatConfigErrors(parsed.errors, s.id).join('\n')}`);
  return parsed.config;
}
