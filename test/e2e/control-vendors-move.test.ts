import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamIds } from '../../src/core/streams.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import type { Daemon } from '../../src/main.js';
import { writesOf } from '../../src/store/control.js';
import { partnerToken } from '../support/auth.js';
import { type ControlDevice, type ExpectedWrite, loadControlFixture } from '../support/control-device.js';
import { waitFor } from '../support/demo.js';
import { startVendorSite, type VendorSite } from '../support/vendor-site.js';

const VENDORS = ['huawei-sun2000', 'victron-gx'] as const;
const Q = 15 * 60_000;
// a winter night: the simulator's battery discharges into the house, nothing is clipped
const START = Date.parse('2026-01-15T01:00:00Z') + 60_000;
const SPEED = 120;
const iso = (ms: number) => new Date(ms).toISOString();

describe('vendor maps without hold through the daemon: hold refused, charge as the document says, DELETE ends it', () => {
  let site: VendorSite;
  let devices: Map<string, ControlDevice>;
  let daemon: Daemon;
  let token: string;

  beforeAll(async () => {
    site = await startVendorSite({
      id: 'vendors-move',
      name: 'Vendor fixtures with simulated batteries',
      vendors: VENDORS,
      start: START,
      speed: SPEED,
      more: { poll: { intervalSeconds: 5 }, control: { enabled: true } },
    });
    ({ daemon, devices } = site);
    token = await partnerToken(await ensureDemoCredentials(daemon));
  });
  afterAll(async () => site?.close());

  const put = (v: string, slots: object[]) =>
    fetch(`${daemon.url}/api/v1/devices/inv-${v}/plan`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slots }),
    });
  const words = (w: { address: number; words: number[] }): ExpectedWrite => ({ address: w.address, words: w.words });

  it.each(VENDORS)('%s', async (v) => {
    const device = devices.get(v)!;
    const f = loadControlFixture(v);
    const audit = () => writesOf(daemon.ctx.db, `inv-${v}`);
    const start = Math.floor(daemon.ctx.clock.now() / Q) * Q;
    const interval = `${iso(start)}/${iso(start + 4 * Q)}`;

    // the battery's state of charge read (the executor has run since the start, and found the device's control)
    await new Promise<void>((resolve) => {
      const off = daemon.ctx.bus.on('reading', (r) => {
        if (r.streamId !== streamIds.batteryAggregate(`inv-${v}`) || r.values.soc === undefined) return;
        off();
        resolve();
      });
    });
    const before = device.writes.length;
    const hold = await put(v, [{ interval, mode: 'hold' }]);
    expect(hold.status).toBe(400);
    expect(((await hold.json()) as { code: string }).code).toBe('SLOT_MODE_UNSUPPORTED');
    const stored = await fetch(`${daemon.url}/api/v1/devices/inv-${v}/plan`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(stored.status).toBe(404);

    const charge = await put(v, [{ interval, mode: 'charge', powerW: 2000 }]);
    expect(charge.status, await charge.clone().text()).toBe(200);
    const first = f.steps.find(
      (s) => s.command.mode === 'charge' && 'powerW' in s.command && s.command.powerW === 2000,
    )!;
    // the fixture's second step is the same command again: the keep-alive's writes
    const keepAlive = f.steps[f.steps.indexOf(first) + 1]!;
    expect(keepAlive.command).toEqual(first.command);
    await waitFor(
      'the charge and a keep-alive written',
      () => device.writes.length >= before + first.writes.length + keepAlive.writes.length || undefined,
    );
    const got = device.writes.slice(before).map(words);
    expect(got.slice(0, first.writes.length)).toEqual(first.writes);
    for (const w of got.slice(first.writes.length)) expect(keepAlive.writes).toContainEqual(w);
    for (const w of audit()) expect(w.readBack).toEqual(w.values);
    expect(audit().some((w) => w.writer === 'partner:demo-partner')).toBe(true);

    const del = await fetch(`${daemon.url}/api/v1/devices/inv-${v}/plan`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(del.status).toBe(204);
    const selfWrites = f.steps.filter((s) => s.command.mode === 'self-consumption').flatMap((s) => s.writes);
    const written = device.writes.length;
    // a keep-alive already under way ends first; then self-consumption as the document gives it
    const released = await waitFor('self-consumption written', () => {
      const rows = device.writes.slice(written).map(words);
      const i = rows.findIndex((w) =>
        selfWrites.some((s) => s.address === w.address && s.words.join() === w.words.join()),
      );
      return i < 0 ? undefined : { i, rows };
    });
    for (const w of released.rows.slice(0, released.i)) expect(keepAlive.writes).toContainEqual(w);
    const after = written + released.i + selfWrites.length;
    // the keep-alive came every third of the command's life (Huawei 20 s, Victron 10 s): 90 s on
    // the daemon's clock hold several, and after self-consumption not one write more
    const until = daemon.ctx.clock.now() + 90_000;
    await waitFor('90 site seconds', () => daemon.ctx.clock.now() > until || undefined);
    expect(device.writes.slice(after).map(words)).toEqual([]);
    expect(device.writes.slice(written + released.i).map(words)).toEqual(selfWrites);
  });
});
