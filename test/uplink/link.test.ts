/**
 * MqttLink's stop against a real TCP peer that accepts the connection and never sends CONNACK:
 * a broker still busy with the CONNECT (slow to authenticate, or loaded) when the daemon stops.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { UplinkConfig } from '../../src/config/types.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { MqttLink } from '../../src/uplink/link.js';
import { text, withAppended } from '../config/fixtures.js';
import { waitFor } from '../support/demo.js';

const silentBroker = async () => {
  const sockets: Socket[] = [];
  const closed: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on('close', () => closed.push(s));
    s.on('error', () => undefined);
    // read what comes (the CONNECT), or the socket never sees the end of the stream
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    closed,
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
};

let broker: Awaited<ReturnType<typeof silentBroker>> | undefined;
afterEach(async () => {
  await broker?.close();
});

/** the uplink as site.yaml gives it, every default filled in */
function config(url: string): UplinkConfig {
  const r = parseConfig(
    text(withAppended(['uplink:', `  url: ${url}`, '  protocolVersion: 4'])),
    'site.yaml',
    '/etc/sitegw',
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config.uplink!;
}

it('a stop before the broker has answered CONNECT closes the socket', async () => {
  // mqtt.js's end(false) before CONNACK queues its DISCONNECT for a connection that never comes,
  // calls back at once and leaves the socket open: the broker kept seeing the stopped gateway
  broker = await silentBroker();
  const failures: string[] = [];
  const link = new MqttLink(
    config(broker.url),
    { topic: 'sitegw/test/status', payload: 'offline' },
    {
      connected: () => undefined,
      disconnected: () => undefined,
      message: () => undefined,
      failed: (e) => failures.push(e.code),
      faulted: (_handler, err) => {
        throw err;
      },
    },
  );
  link.start();
  await waitFor('the connection', () => broker!.sockets.length === 1);
  await link.stop({ topic: 'sitegw/test/status', payload: 'offline' });
  await waitFor('the socket closed', () => broker!.closed.length === 1);
  expect(link.connected).toBe(false);
  expect(failures).toEqual([]);
  // and it stays stopped: no new attempt
  await new Promise((r) => setTimeout(r, 1200));
  expect(broker.sockets).toHaveLength(1);
});
