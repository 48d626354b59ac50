/**
 * The Home Assistant connection's failures name its own site.yaml keys: the connection advice
 * (src/uplink/errors.ts) is shared with the uplink, whose keys an installer would look for in vain.
 */
import { type AddressInfo, createServer } from 'node:net';
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { MqttLink } from '../../src/uplink/link.js';
import { text, withAppended } from '../config/fixtures.js';
import { waitFor } from '../support/demo.js';

async function refusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

it.each([
  ['homeassistant', /check the port in homeassistant\.url/],
  ['uplink', /check the port in uplink\.url/],
] as const)('a refused connection of %s names its url key', async (section, advice) => {
  const port = await refusedPort();
  const r = parseConfig(
    text(withAppended([`${section}:`, `  url: mqtt://127.0.0.1:${port}`])),
    'site.yaml',
    '/etc/sitegw',
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const failures: { code: string; message: string }[] = [];
  const link = new MqttLink(
    r.config[section]!,
    { topic: 't/status', payload: 'offline' },
    {
      connected: () => undefined,
      disconnected: () => undefined,
      message: () => undefined,
      failed: (e) => failures.push(e),
      faulted: () => undefined,
    },
    section,
  );
  link.start();
  try {
    const f = await waitFor('a failure', () => failures[0]);
    expect(f.code).toBe('CONNECTION_REFUSED');
    expect(f.message).toMatch(advice);
    expect(f.message).not.toMatch(section === 'uplink' ? /homeassistant\./ : /uplink\./);
  } finally {
    await link.stop();
  }
});
