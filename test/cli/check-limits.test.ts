/**
 * `sitegw check-config` with site limits names what each inverter does when the gateway is gone
 * (docs/limits.md): asked over real Modbus TCP, the simulator's SunSpec 123 inverter is named as
 * reverting to unlimited, its 704 inverter as falling to the fail-safe; a vendor profile's output
 * map of which no source says what the device does (Huawei SUN2000), and one limited through the
 * device's own export limiter (Sungrow SH), are named too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { captureLines as capture } from '../support/output.js';

const dir = mkdtempSync(join(tmpdir(), 'sitegw-check-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function check(models: (123 | 704)[], limits: string, offline = false, edit = (y: string) => y) {
  const cfg = defaultSimConfig();
  cfg.inverter.limitModels = models;
  const clock = new ScaledClock(1);
  const servers = await startSimServers(new SimSite(cfg, clock.now()), clock, { host: '127.0.0.1' });
  try {
    const yaml = `${edit(demoSiteYaml(servers, { httpHost: '127.0.0.1', httpPort: 0, dataDir: dir, pollSeconds: 5, batteryBlocks: 2 }))}\n${limits}`;
    const file = join(dir, `site-${models.join('-')}.yaml`);
    writeFileSync(file, yaml);
    const io = capture();
    expect(await checkConfigCommand(file, io, offline)).toBe(0);
    return io.stdout;
  } finally {
    await servers.close();
  }
}

describe('check-config with site limits', () => {
  it('names a SunSpec 123 inverter as reverting to unlimited', async () => {
    const out = await check([123], 'limits:\n  exportW: 0\n  revertSeconds: 30\n');
    expect(out).toContain('limits: exportW 0 W; fail-safe 0 W; devices revert after 30 s');
    expect(out.find((l) => l.startsWith('  WARNING inverter'))).toMatch(
      /WARNING inverter: reverts to UNLIMITED output 30 s after/,
    );
  });

  it('says a SunSpec 704 inverter falls to the fail-safe', async () => {
    const out = await check([704], 'limits:\n  exportW: 3000\n  failSafeW: 1500\n');
    expect(out).toContain('  inverter: falls to the fail-safe 60 s after the gateway stops writing');
  });

  it('names a vendor map whose revert no source gives, and a device limited through its own export limiter', async () => {
    const as = (profile: string) => (y: string) => {
      const out = y.replace(/(- id: inverter\n(?: {4}.*\n)*? {4})profile: sunspec/, `$1profile: ${profile}`);
      expect(out).toContain(profile);
      return out;
    };
    const huawei = await check([], 'limits:\n  exportW: 0\n', false, as('huawei-sun2000'));
    expect(huawei.find((l) => l.startsWith('  WARNING inverter'))).toMatch(
      /WARNING inverter: no source says what it does with the limit when the gateway is gone/,
    );
    const sungrow = await check([], 'limits:\n  exportW: 0\n', false, as('sungrow-sh-rt'));
    expect(sungrow).toContain(
      '  inverter: limited through its own export limiter (device-export-limit): it holds the export limit at its own meter; a generation limit it cannot hold',
    );
    expect(sungrow.find((l) => l.startsWith('  WARNING inverter'))).toMatch(
      /WARNING inverter: no source says what it does with the limit when the gateway is gone/,
    );
  });

  it('names an inverter without a limit; no section without limits; --offline asks no device', async () => {
    expect((await check([], 'limits:\n  exportW: 0\n')).join('\n')).toMatch(
      /WARNING inverter: offers no active power limit/,
    );
    expect((await check([704], '')).some((l) => l.startsWith('limits:'))).toBe(false);
    expect(await check([704], 'limits:\n  exportW: 0\n', true)).toContain('  (devices not asked: --offline)');
  });
});
