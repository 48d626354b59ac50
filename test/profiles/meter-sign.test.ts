/**
 * Issue 16 finding 4: a SunSpec meter's power sign by vendor. SolarEdge's meters in the
 * inverter's chain send + = export (evcc's solaredge-hybrid reads 203:W with scale -1); sitegw
 * picks that from the common model's manufacturer, names it in `sitegw scan`, and site.yaml's
 * `meterSign` overrides it. The corpus (solaredge-se10k-meter.yaml) checks the automatic choice
 * against the source's value; these check the override, the config errors and the scan output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanCommand } from '../../src/cli/scan.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { meterSignOf, vendorMeterSign } from '../../src/profiles/sunspec-vendors.js';
import { expectSingleError, MINIMAL, text, withAppended } from '../config/fixtures.js';
import { type CorpusSite, startCorpusSite } from '../support/corpus-site.js';
import { getJson, waitFor } from '../support/demo.js';
import { FIXTURE_DIR, loadFixture, serveImage } from '../support/register-image.js';

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const solarEdge = () => loadFixture(`${FIXTURE_DIR}/solaredge-se10k-meter.yaml`);

describe('the vendor table', () => {
  it('SolarEdge (any spelling the common model gives) is + export; others and unknown are + import', () => {
    expect(vendorMeterSign('SolarEdge').sign).toBe('export-positive');
    expect(vendorMeterSign('SolarEdge ').sign).toBe('export-positive');
    expect(vendorMeterSign('SOLAREDGE').sign).toBe('export-positive');
    expect(vendorMeterSign('Fronius').sign).toBe('import-positive');
    expect(vendorMeterSign(undefined).sign).toBe('import-positive');
    expect(meterSignOf('import-positive', 'SolarEdge')).toBe('import-positive');
    expect(meterSignOf('auto', 'SolarEdge')).toBe('export-positive');
  });
});

describe("site.yaml's meterSign wins over the vendor's sign, through the real daemon", () => {
  let site: CorpusSite;
  beforeAll(async () => {
    const f = solarEdge();
    f.devices = f.devices.map((d) =>
      d.role === 'grid-meter' ? { ...d, options: { meterSign: 'import-positive' } } : d,
    );
    site = await startCorpusSite(f);
  });
  afterAll(async () => site?.stop());

  it('the meter that the corpus reads as exporting 1,800 W reads as importing when the installer says + import', async () => {
    const entry = await waitFor('a closed bucket', async () => {
      const r = await getJson(
        `${site.url}/api/v1/devices/grid__GRID_METER_DERIVED/telemetry?interval=${iso(site.start - 3_600_000)}/PT3H`,
        site.token,
      );
      return (r.body.entries as { power_W?: number }[] | undefined)?.[0];
    });
    expect(entry.power_W).toBe(1800);
  });
});

describe('meterSign in site.yaml', () => {
  const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');
  const meter = (extra: string[]) =>
    withAppended([
      '  - id: meter',
      '    role: grid-meter',
      '    profile: sunspec',
      ...extra,
      '    connection: { type: tcp, host: 192.168.1.51 }',
    ]);

  it('is accepted on a SunSpec meter and reaches the device config', () => {
    const r = parse(meter(['    meterSign: export-positive']));
    expect(r.ok && r.config.devices[1]!.meterSign).toBe('export-positive');
  });

  it('a value that is not a sign names the three choices', () => {
    expectSingleError(parse(meter(['    meterSign: negative'])), {
      path: 'devices[1].meterSign',
      line: 19,
      message: /auto.*import-positive.*export-positive/,
      hint: /import-positive or export-positive/,
    });
  });

  it('on an inverter, or on a meter whose YAML profile gives its own signs, it is refused with the line to remove', () => {
    expectSingleError(parse([...MINIMAL.slice(0, 12), '    meterSign: export-positive', ...MINIMAL.slice(12)]), {
      path: 'devices[0].meterSign',
      line: 13,
      message: /only applies to a meter; this device's role is inverter/,
      hint: /remove the line/,
    });
    const yamlMeter = withAppended([
      '  - id: meter',
      '    role: grid-meter',
      '    profile: eastron-sdm630',
      '    meterSign: export-positive',
      '    connection: { type: tcp, host: 192.168.1.51 }',
    ]);
    expectSingleError(parse(yamlMeter), {
      path: 'devices[1].meterSign',
      line: 19,
      message: /profile eastron-sdm630 gives its own registers and signs/,
      hint: /remove the line/,
    });
  });
});

describe('sitegw scan names the sign', () => {
  it('a SolarEdge chain with a meter: the sign, its source, and meterSign in the snippet', async () => {
    const f = solarEdge();
    const server = await serveImage(f);
    try {
      const out: string[] = [];
      expect(
        await scanCommand(['--tcp', `${server.host}:${server.port}`, '--units', '1'], {
          out: (t) => out.push(t),
          err: () => undefined,
        }),
      ).toBe(0);
      const report = out.join('');
      expect(report).toMatch(
        /unit 1 +SolarEdge SE10K-RWS48BEN4, serial 7E1234AB, SunSpec models 1, 103, 1, 203, meter power read as \+ export \(evcc solaredge-hybrid: 203:W, scale -1\)/,
      );
      // finding 6: the meter in the inverter's chain is offered as a device of its own on the same unit
      const snippet = report.slice(report.indexOf('\ndevices:') + 1);
      expect(snippet).toMatch(
        /- id: meter-1\n {4}role: grid-meter {2}# or consumption-meter\n {4}profile: sunspec\n {4}meterSign: export-positive\n/,
      );
      const config = parseConfig(`${MINIMAL.slice(0, 8).join('\n')}\n${snippet}`, 'snippet.yaml', '/tmp');
      expect(config.ok && config.config.devices.map((d) => [d.id, d.role, d.connection.unitId, d.meterSign])).toEqual([
        ['inverter-1', 'inverter', 1, undefined],
        ['meter-1', 'grid-meter', 1, 'export-positive'],
      ]);
    } finally {
      await server.close();
    }
  });

  it('a Fronius meter: + import, and no meterSign line (auto is right)', async () => {
    const server = await serveImage(loadFixture(`${FIXTURE_DIR}/fronius-smart-meter.yaml`));
    try {
      const out: string[] = [];
      await scanCommand(['--tcp', `${server.host}:${server.port}`, '--units', '200'], {
        out: (t) => out.push(t),
        err: () => undefined,
      });
      expect(out.join('')).toMatch(/SunSpec models 1, 203, meter power read as \+ import\n/);
      expect(out.join('')).not.toContain('meterSign');
    } finally {
      await server.close();
    }
  });
});
