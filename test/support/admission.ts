/**
 * What the API port holds, seen from outside the daemon: the kernel's table of the process's
 * TCP connections (Linux /proc) and the slot gauges of /metrics (src/api/http/connection-metrics.ts),
 * for the admission attack tests and the invariant harness.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { rawRequest } from './auth.js';
import { parsePromText } from './prom-text.js';

/** The inodes of the process's socket descriptors. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The daemon's live TCP connections on `port` (server side, ESTABLISHED), by remote address: /proc/net/tcp joined with the process's descriptors. */
export function heldByAddress(pid: number, port: number): Map<string, number> {
  const inodes = socketInodes(pid);
  const out = new Map<string, number>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [, localPort] = f[1]!.split(':');
    // ESTABLISHED only: a socket whose peer has closed (CLOSE_WAIT) is a connection that is gone,
    // which the daemon may hold only until it reads the close
    if (Number.parseInt(localPort!, 16) !== port || f[3] !== '01' || !inodes.has(f[9]!)) continue;
    const hex = f[2]!.split(':')[0]!;
    const addr = [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
    out.set(addr, (out.get(addr) ?? 0) + 1);
  }
  return out;
}

export interface Slots {
  slots: number;
  sockets: number;
  websockets: number;
  byAddress: Map<string, number>;
}

/** The address the probe asks from, so its own connection can be told apart. */
export const PROBE = '127.0.0.254';

/** The slot gauges of /metrics (a token with device.read), asked from PROBE on a connection of its own. */
export async function slotsOf(url: string, token: string): Promise<Slots> {
  const r = await rawRequest({
    url: `${url}/metrics`,
    localAddress: PROBE,
    headers: { authorization: `Bearer ${token}`, connection: 'close' },
  });
  if (r.status !== 200) throw new Error(`/metrics: ${r.status} ${r.text.slice(0, 200)}`);
  const f = parsePromText(r.text);
  const one = (name: string) => f.get(name)?.samples[0]?.value ?? Number.NaN;
  const byAddress = new Map<string, number>();
  for (const s of f.get('sitegw_http_connection_slots_by_address')?.samples ?? [])
    byAddress.set(s.labels.address!, s.value);
  return {
    slots: one('sitegw_http_connection_slots'),
    sockets: one('sitegw_http_connection_sockets'),
    websockets: one('sitegw_http_connection_websockets'),
    byAddress,
  };
}

/**
 * The sockets the daemon holds for the API port: descriptors whose connection is on `port` (any
 * state but listening), plus those whose connection is in no table of the kernel at all (a TCP
 * socket whose connection is gone: reset or closed, with the descriptor still open). Its other
 * sockets (listeners, its links to the simulator, logging) are left out.
 */
export function portSockets(pid: number, port: number): number {
  const inodes = socketInodes(pid);
  let n = 0;
  const seen = new Set<string>();
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6', 'unix']) {
    const lines = readFileSync(`/proc/net/${table}`, 'utf8').split('\n').slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      const inode = table === 'unix' ? f[6] : f[9];
      if (!inode || !inodes.has(inode)) continue;
      seen.add(inode);
      if (table === 'tcp' && f[3] !== '0A' && Number.parseInt(f[1]!.split(':')[1]!, 16) === port) n++;
    }
  }
  for (const i of inodes) if (!seen.has(i)) n++;
  return n;
}
