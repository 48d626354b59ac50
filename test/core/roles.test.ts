import { describe, expect, it } from 'vitest';
import { DEVICE_ROLES } from '../../src/core/device-role.js';
import { ownStreamId, ROLES, roleMeasures } from '../../src/core/roles.js';
import { streamIds } from '../../src/core/streams.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';

const EP = { host: '127.0.0.1', port: 502 };
const siteConfig = () =>
  demoSiteConfig(
    { inverter: EP, meter: EP },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 2 },
  );

describe('the role table', () => {
  it('has every role, each with its own stream first', () => {
    expect(Object.keys(ROLES).sort()).toEqual([...DEVICE_ROLES].sort());
    expect(DEVICE_ROLES.map((r) => ownStreamId(r, 'd'))).toEqual([
      streamIds.inverter('d'),
      streamIds.batteryBlock('d'),
      streamIds.gridMeter('d'),
      streamIds.consumptionMeter('d'),
    ]);
    expect(DEVICE_ROLES.filter((r) => roleMeasures(r, 'state'))).toEqual(['grid-meter']);
  });

  it("is what Site.streams() lists: every device's streams, in table order, with the table's kind and channels", () => {
    const site = new Site(siteConfig());
    const inverter = site.byRole('inverter')[0]?.config.id ?? '';
    site.learn(inverter, { pvModules: 2 });
    const streams = site.streams();
    for (const d of site.devices.values()) {
      const own = streams.filter((s) => s.deviceId === d.config.id);
      const expected = ROLES[d.config.role].streams.flatMap((t) => {
        if (t.count === 'perModule')
          return [1, 2].map((n) => ({ t, id: t.id(d.config.id, n), label: `${t.label} ${n}` }));
        if (t.count === 'ifBatteries' && site.batteriesOf(d.config.id).length === 0) return [];
        return [{ t, id: t.id(d.config.id, 0), label: t.label }];
      });
      expect(own.map((s) => s.id)).toEqual(expected.map((e) => e.id));
      own.forEach((s, i) => {
        const e = expected[i];
        expect(s).toMatchObject({
          deviceKind: e?.t.deviceKind,
          label: e?.label,
          role: e?.t.role,
          channels: e?.t.channels,
        });
      });
      expect(d.kind).toBe(ROLES[d.config.role].kind);
    }
    expect(streams.some((s) => s.id === streamIds.consumptionDerived(site.id))).toBe(false);
  });

  it('adds the derived house stream, owned by the grid meter, on a site without a consumption meter', () => {
    const config = siteConfig();
    const site = new Site({ ...config, devices: config.devices.filter((d) => d.role !== 'consumption-meter') });
    const derived = site.stream(streamIds.consumptionDerived(site.id));
    expect(derived).toMatchObject({
      deviceId: site.byRole('grid-meter')[0]?.config.id,
      deviceKind: 'meter',
      role: 'house',
    });
    expect(derived?.channels).toEqual(['power_W', 'energy_Wh_increment', 'energy_Wh_decrement']);
  });
});
