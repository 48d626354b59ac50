/**
 * What the kernel still holds of what the gateway wrote to a TCP connection: bytes the peer has
 * not acknowledged (Linux /proc/net/tcp and tcp6, `tx_queue` = write_seq - snd_una). A peer that
 * does not read its socket stops acknowledging once its receive buffer is full, and the kernel
 * then keeps up to a few MiB of answers before a byte waits in the process (`writableLength`),
 * so the proxy's bound on a client's unread answers (client.ts) has to count this queue.
 * Elsewhere than Linux there is no such file: null, and only the process's own bytes count.
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { endianness } from 'node:os';

const FILES = ['/proc/net/tcp', '/proc/net/tcp6'];
/** an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address: a dual-stack socket lists it so */
const V4_MAPPED = '00000000000000000000ffff';

/** `address:port` as /proc names it, the address's bytes in hex (IPv4-mapped as IPv4) */
export function endpointKey(address: string, port: number): string | null {
  const bytes = addressBytes(address);
  return bytes ? `${unmap(bytes.toString('hex'))}:${port}` : null;
}

/**
 * Unacknowledged bytes of every TCP connection of this host's network namespace, by
 * `local>remote` endpoint keys; null where /proc/net/tcp cannot be read.
 */
export async function sendQueues(): Promise<Map<string, number> | null> {
  const texts = await Promise.all(FILES.map((f) => readFile(f, 'latin1').catch(() => null)));
  if (texts.every((t) => t === null)) return null;
  const out = new Map<string, number>();
  for (const text of texts) if (text !== null) parseSendQueues(text, out);
  return out;
}

/** the rows of one /proc/net/tcp or tcp6 text into `out` */
export function parseSendQueues(text: string, out = new Map<string, number>()): Map<string, number> {
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue ...
    const f = line.trim().split(/\s+/);
    if (f.length < 5) continue;
    const local = procEndpoint(f[1]!);
    const remote = procEndpoint(f[2]!);
    const tx = Number.parseInt(f[4]!.split(':')[0]!, 16);
    if (local && remote && Number.isFinite(tx)) out.set(`${local}>${remote}`, tx);
  }
  return out;
}

/** `0100007F:05DE` (the address as 32-bit words in the host's byte order) to an endpoint key */
function procEndpoint(field: string): string | null {
  const [hex, port] = field.split(':');
  if (!hex || !port || (hex.length !== 8 && hex.length !== 32)) return null;
  const bytes = Buffer.from(hex, 'hex');
  if (endianness() === 'LE') for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  return `${unmap(bytes.toString('hex'))}:${Number.parseInt(port, 16)}`;
}

function unmap(hex: string): string {
  return hex.length === 32 && hex.startsWith(V4_MAPPED) ? hex.slice(V4_MAPPED.length) : hex;
}

/** the 4 or 16 bytes of an address as Node prints it (`127.0.0.1`, `::ffff:127.0.0.1`, `fe80::1%eth0`) */
function addressBytes(address: string): Buffer | null {
  const a = address.split('%')[0]!;
  if (net.isIPv4(a)) return Buffer.from(a.split('.').map(Number));
  if (!net.isIPv6(a)) return null;
  // a dotted tail (::ffff:127.0.0.1) as its two words
  const text = a.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, b0, b1, b2, b3) =>
    [(+b0 << 8) | +b1, (+b2 << 8) | +b3].map((w) => w.toString(16)).join(':'),
  );
  const [head = '', rest] = text.split('::');
  const words = (s: string) => (s ? s.split(':').map((w) => Number.parseInt(w, 16)) : []);
  const h = words(head);
  const r = words(rest ?? '');
  const fill = 8 - h.length - r.length;
  if (fill < 0 || (rest === undefined && fill !== 0)) return null;
  const all = [...h, ...Array<number>(fill).fill(0), ...r];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, 2 * i));
  return out;
}
