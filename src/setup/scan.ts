/**
 * A Modbus TCP bus scanned from the setup page: `sitegw scan`'s discovery (src/discovery), its
 * site.yaml snippet read back as data, each device's id made free of the site's ids. TCP only:
 * a serial line is held by the running gateway's own polls, so it is scanned with `sitegw scan`
 * while the service is stopped (docs/install.md).
 */
import { isIP } from 'node:net';
import { parseDocument, type YAMLSeq } from 'yaml';
import { parseUnits, scanBusAgain } from '../discovery/scan.js';
import { siteYamlSnippet } from '../discovery/scan-report.js';
import { TcpBus } from '../modbus/tcp-bus.js';
import { installedProfiles } from '../profiles/registry.js';

export interface ScannedDevice {
  /** as the scan proposes it, renamed where the site has the id already */
  device: Record<string, unknown> & { id: string; role: string; profile: string };
  /** what the scan says about it: unit, vendor, model, serial */
  note: string;
}

export class ScanRequestError extends Error {}

/** `host[:port]` (default 502), or throws ScanRequestError. */
export function tcpTarget(spec: string): { host: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(spec);
  const plain = /^([^:\s]+)(?::(\d+))?$/.exec(spec);
  const m = v6 ?? (isIP(spec) === 6 ? [spec, spec, undefined] : plain);
  if (!m?.[1] || spec.length > 255) throw new ScanRequestError(`'${spec.slice(0, 60)}' is not HOST or HOST:PORT`);
  const port = m[2] === undefined ? 502 : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ScanRequestError(`port ${m[2]} is not 1..65535`);
  return { host: m[1], port };
}

/** Asks `units` on the TCP bus at `target`; a device whose id the site has gets `-2`, `-3`, … */
export async function scanTcp(target: string, unitsSpec: string, taken: ReadonlySet<string>): Promise<ScannedDevice[]> {
  const { host, port } = tcpTarget(target);
  let units: number[];
  try {
    units = parseUnits(unitsSpec);
  } catch (e) {
    throw new ScanRequestError((e as Error).message.replace('--units: ', 'units: '));
  }
  if (units.length > 64)
    throw new ScanRequestError('at most 64 unit ids at once from the page (sitegw scan asks more)');
  const bus = new TcpBus({ host, port, timeoutMs: 500, backoff: { failuresBeforeBackoff: Number.POSITIVE_INFINITY } });
  try {
    const result = await scanBusAgain(bus, { units, profiles: [...installedProfiles().profiles.values()] });
    const doc = parseDocument(siteYamlSnippet(result, { type: 'tcp', host, port }));
    const devices = (doc.toJS() as { devices?: ScannedDevice['device'][] } | null)?.devices ?? [];
    const items = (doc.get('devices') as YAMLSeq | undefined)?.items ?? [];
    const ids = new Set(taken);
    return devices.map((device, i) => {
      let id = device.id;
      for (let n = 2; ids.has(id); n++) id = `${device.id}-${n}`;
      ids.add(id);
      // the comment the scan wrote above it: `unit 1: vendor model, serial …, profile …`
      const note = ((items[i] as { commentBefore?: string } | undefined)?.commentBefore ?? '').trim();
      return { device: { ...device, id }, note };
    });
  } finally {
    await bus.close();
  }
}
