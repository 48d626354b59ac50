/**
 * The kernel's send queue of a proxy client's connection, read from /proc/net/tcp and tcp6
 * (src/proxy/send-queue.ts): the rows' addresses are 32-bit words in the host's byte order, a
 * dual-stack port lists IPv4 clients as ::ffff:a.b.c.d, and Node names the same endpoints as
 * strings; both must give one key, or a client that never reads is never found.
 */
import { endianness } from 'node:os';
import { describe, expect, it } from 'vitest';
import { endpointKey, parseSendQueues } from '../../src/proxy/send-queue.js';

const HEAD = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const row = (local: string, remote: string, tx: number) =>
  `   0: ${local} ${remote} 01 ${tx.toString(16).toUpperCase().padStart(8, '0')}:00000000 00:00000000 00000000  1000        0 1 1 0 20 4 30 10 -1\n`;

describe.skipIf(endianness() !== 'LE')('send queues from /proc/net/tcp (a little-endian host: x64, arm64)', () => {
  it('an IPv4 connection: 127.0.0.1:1502 to 127.0.0.1:40000', () => {
    const q = parseSendQueues(
      HEAD + row('0100007F:05DE', '0100007F:9C40', 70_000) + row('0100007F:05DE', '00000000:0000', 0),
    );
    const key = `${endpointKey('127.0.0.1', 1502)}>${endpointKey('127.0.0.1', 40000)}`;
    expect(q.get(key)).toBe(70_000);
    expect(q.size).toBe(2);
  });

  it('an IPv4 client of a dual-stack port (tcp6, ::ffff:192.168.1.20) matches either spelling', () => {
    const q = parseSendQueues(
      HEAD + row('0000000000000000FFFF00000101A8C0:05DE', '0000000000000000FFFF00001401A8C0:9C40', 4096),
    );
    expect(q.get(`${endpointKey('::ffff:192.168.1.1', 1502)}>${endpointKey('::ffff:192.168.1.20', 40000)}`)).toBe(4096);
    expect(q.get(`${endpointKey('192.168.1.1', 1502)}>${endpointKey('192.168.1.20', 40000)}`)).toBe(4096);
  });

  it('an IPv6 connection: [::1]:1502 to [fe80::1%eth0]:40000', () => {
    const q = parseSendQueues(
      HEAD + row('00000000000000000000000001000000:05DE', '000080FE000000000000000001000000:9C40', 1),
    );
    expect(q.get(`${endpointKey('::1', 1502)}>${endpointKey('fe80::1%eth0', 40000)}`)).toBe(1);
  });

  it('what is not an address gives no key, and a torn row is skipped', () => {
    expect(endpointKey('unknown', 1502)).toBeNull();
    expect(parseSendQueues(`${HEAD}   0: 0100007F:05DE\n`).size).toBe(0);
  });
});
