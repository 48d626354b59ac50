import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itemAt } from '../../src/core/item-at.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { MINIMAL, text, withAppended, withLine } from './fixtures.js';

function accepted(yaml: string, baseDir = '/etc/sitegw') {
  const result = parseConfig(yaml, 'site.yaml', baseDir);
  if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
  return result.config;
}

describe('a minimal site.yaml', () => {
  it('fills every default', () => {
    const config = accepted(text(MINIMAL));
    expect(config).toEqual({
      site: {
        id: 'home',
        name: 'Home',
        timezone: 'Europe/Berlin',
        currency: 'EUR',
        location: { latitude: 52.5, longitude: 13.4 },
      },
      http: { host: '127.0.0.1', port: 8080, tls: { mode: 'auto' }, insecure: false },
      control: {
        enabled: false,
        dryRun: false,
        reserveSoc: 20,
        socMin: 10,
        socMax: 100,
        maxChargeW: 5000,
        maxDischargeW: 5000,
        importLimitW: 11000,
        exportLimitW: 11000,
        gridCharge: true,
        revertSeconds: 60,
        chargeEfficiency: 0.95,
        dischargeEfficiency: 0.95,
        cycleCostPerKWh: 0,
      },
      modbusProxy: [],
      dataDir: '/etc/sitegw/data',
      poll: { intervalSeconds: 10 },
      api: { socScale: 'percent' },
      grid: { debounce: 2 },
      ws: { maxEntriesPerMessage: 100 },
      retention: {},
      auth: {
        accessTokenSeconds: 3600,
        refreshTokenDays: 30,
        codeSeconds: 60,
        maxFailedAttempts: 10,
        failureWindowSeconds: 300,
      },
      devices: [
        {
          id: 'inv',
          role: 'inverter',
          profile: 'sunspec',
          connection: { type: 'tcp', host: '192.168.1.50', port: 502, unitId: 1, timeoutMs: 1000 },
        },
      ],
      limits: {
        negativeExportPrice: 'curtail',
        revertSeconds: 60,
        http: {
          headersSeconds: 10,
          requestSeconds: 30,
          idleSeconds: 60,
          keepAliveSeconds: 5,
          maxConnections: 128,
          maxConnectionsPerAddress: 32,
          maxPipelinedRequests: 16,
          maxUnsentMiB: 16,
          maxWebSocketsPerClient: 8,
        },
        dynamicTariffs: { maxPerClient: 10, maxValuesPerTariff: 350400, maxValuesPerClientPerDay: 50000 },
      },
    });
  });

  it('fills defaults inside a section that sets only some keys', () => {
    const config = accepted(text(withAppended(['http:', '  host: 0.0.0.0'])));
    expect(config.http).toEqual({ host: '0.0.0.0', port: 8080, tls: { mode: 'auto' }, insecure: false });
  });

  it('keeps values that are set', () => {
    const config = accepted(
      text(
        withAppended([
          '      port: 1502',
          '      unitId: 0',
          '      timeoutMs: 250',
          'api:',
          '  socScale: fraction',
          'dataDir: /var/lib/sitegw',
        ]),
      ),
    );
    expect(itemAt(config.devices, 0).connection).toEqual({
      type: 'tcp',
      host: '192.168.1.50',
      port: 1502,
      unitId: 0,
      timeoutMs: 250,
    });
    expect(config.api.socScale).toBe('fraction');
    expect(config.dataDir).toBe('/var/lib/sitegw');
  });

  it("takes a relative dataDir from the config file's folder", () => {
    expect(accepted(text(withAppended(['dataDir: db/here'])), '/srv/site').dataDir).toBe('/srv/site/db/here');
    const fromCwd = parseConfig(text(MINIMAL));
    expect(fromCwd.ok && fromCwd.config.dataDir).toBe(resolve(process.cwd(), 'data'));
  });

  it('links a battery without `inverter` to the first inverter', () => {
    const config = accepted(
      text(
        withAppended([
          '  - id: bat',
          '    role: battery',
          '    profile: sunspec',
          '    connection: { type: tcp, host: 192.168.1.51 }',
        ]),
      ),
    );
    expect(itemAt(config.devices, 1).inverter).toBe('inv');
  });

  it('writes a time zone in its canonical spelling', () => {
    expect(accepted(text(withLine(4, '  timezone: europe/berlin'))).site.timezone).toBe('Europe/Berlin');
  });

  it('accepts unit id 0 over TCP', () => {
    expect(itemAt(accepted(text(withAppended(['      unitId: 0']))).devices, 0).connection.unitId).toBe(0);
  });
});
