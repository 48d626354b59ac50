/**
 * A bus scanned from a page: `sitegw scan`'s discovery (src/discovery), its site.yaml snippet
 * read back as data, each device's id made free of the site's ids. The setup page scans Modbus
 * TCP only: a serial line is held by the running gateway's own polls, so it is scanned with
 * `sitegw scan` while the service is stopped (docs/install.md). The first-run page, where
 * nothing polls yet, scans a serial line too.
 */
import { isIP } from 'node:net';
import { parseDocument, type YAMLSeq } from 'yaml';
import { parseUnits, scanBusAgain } from '../discovery/scan.js';
import { type ScanLink, siteYamlSnippet } from '../discovery/scan-report.js';
import { SerialLink } from '../modbus/byte-link.js';
import type { QueuedBus } from '../modbus/queued-bus.js';
import { RtuBus } from '../modbus/rtu-bus.js';
import { interFrameDelayMs } from '../modbus/rtu-timing.js';
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

export type RtuLink = Extract<ScanLink, { type: 'rtu' }>;
type Backoff = ConstructorParameters<typeof RtuBus>[0]['backoff'];

/**
 * A serial line set up for a sweep (`sitegw scan --rtu` and the first-run page): each unit id is
 * asked in turn, so a late answer cannot pass for the next request's (another address); after a
 * timeout the line only needs to be free again. Returns the bus and the longest the sweep of
 * `units` silent ids can take, ms.
 */
export function rtuScanBus(l: RtuLink, timeoutMs: number, units: number, backoff: Backoff) {
  const gap = interFrameDelayMs(l.baudRate, l.parity, l.stopBits);
  const settleMs = 20;
  const bus = new RtuBus({
    name: `rtu:${l.device}`,
    link: () =>
      new SerialLink({ device: l.device, baudRate: l.baudRate, parity: l.parity, dataBits: 8, stopBits: l.stopBits }),
    timeoutMs,
    interFrameDelayMs: gap,
    settleAfterTimeoutMs: settleMs,
    backoff,
    reconnect: { maxBackoffMs: 1000 },
  });
  return { bus, boundMs: units * (timeoutMs + settleMs + gap + 10) };
}

/** The serial line the first-run page names: a device path and its line settings, or throws ScanRequestError. */
export function rtuLink(v: { device?: unknown; baudRate?: unknown; parity?: unknown; stopBits?: unknown }): RtuLink {
  const device = typeof v.device === 'string' ? v.device : '';
  // an absolute path as `sitegw scan --rtu` takes it (/dev/ttyUSB0, a /dev/serial/by-id link)
  if (!/^\/[A-Za-z0-9._:/-]{1,200}$/.test(device) || device.includes('..'))
    throw new ScanRequestError(`'${device.slice(0, 60)}' is not a serial device path such as /dev/ttyUSB0`);
  const baudRate = Number(v.baudRate ?? 9600);
  if (!Number.isInteger(baudRate) || baudRate < 1200 || baudRate > 115200)
    throw new ScanRequestError('the baud rate is 1200 to 115200 (the line speed set on the devices, e.g. 9600)');
  const parity = v.parity ?? 'none';
  if (parity !== 'none' && parity !== 'even' && parity !== 'odd')
    throw new ScanRequestError('parity is none, even or odd');
  const stopBits = Number(v.stopBits ?? 1);
  if (stopBits !== 1 && stopBits !== 2) throw new ScanRequestError('stop bits are 1 or 2');
  return { type: 'rtu', device, baudRate, parity, stopBits };
}

/** Asks `units` on the TCP bus at `target`, or on the serial line `target` names; a device whose id the site has gets `-2`, `-3`, … */
export async function scanLink(
  target: string | RtuLink,
  unitsSpec: string,
  taken: ReadonlySet<string>,
): Promise<ScannedDevice[]> {
  let units: number[];
  try {
    units = parseUnits(unitsSpec);
  } catch (e) {
    throw new ScanRequestError((e as Error).message.replace('--units: ', 'units: '));
  }
  if (units.length > 64)
    throw new ScanRequestError('at most 64 unit ids at once from the page (sitegw scan asks more)');
  const never = { failuresBeforeBackoff: Number.POSITIVE_INFINITY };
  let bus: QueuedBus;
  let link: ScanLink;
  if (typeof target === 'string') {
    const { host, port } = tcpTarget(target);
    bus = new TcpBus({ host, port, timeoutMs: 500, backoff: never });
    link = { type: 'tcp', host, port };
  } else {
    if (units.includes(0)) throw new ScanRequestError('units: 0 is the broadcast address on a serial line; start at 1');
    bus = rtuScanBus(target, 300, units.length, never).bus;
    link = target;
  }
  try {
    const result = await scanBusAgain(bus, { units, profiles: [...installedProfiles().profiles.values()] });
    const doc = parseDocument(siteYamlSnippet(result, link));
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
