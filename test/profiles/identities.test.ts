/**
 * `sitegw scan` never guesses: an identity the shipped profiles' sources file under another
 * register map is claimed by no profile, and every identity the sources list for a supported
 * family is claimed by that family's profile. Each case names the source that says so.
 */
import { describe, expect, it } from 'vitest';
import { formatScanReport } from '../../src/discovery/scan-report.js';
import { matchesProfile, readIdentity } from '../../src/profiles/identify.js';
import { installedProfiles } from '../../src/profiles/registry.js';
import { BankReader } from './bank.js';

const profiles = [...installedProfiles().profiles.values()];

/** The profiles that claim a unit with these registers. */
async function claimedBy(bank: BankReader): Promise<string[]> {
  const out: string[] = [];
  for (const p of profiles) {
    try {
      if (await matchesProfile(p, bank, 1)) out.push(p.name);
    } catch {
      // an exception or a decode error is "not this profile", as the scan reads it
    }
  }
  return out;
}

/** Fox ESS model string: one ASCII character per register (low byte) at holding 30000..30015, as foxess-h3.yaml says. */
const fox = (model: string) =>
  new BankReader().set(
    'holding',
    30000,
    [...model.padEnd(16, '\0')]
      .slice(0, 16)
      .map((c) => `00 ${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .join(' '),
  );

/** Deye: register 0 the device type, 3..7 a ten-character serial. */
const deye = (deviceType: number) =>
  new BankReader()
    .set(
      'holding',
      0,
      `${(deviceType >> 8).toString(16).padStart(2, '0')} ${(deviceType & 0xff).toString(16).padStart(2, '0')}`,
    )
    .setText('holding', 3, '2301234567', 5);

/** SolaX: holding 0x0000 the 14-character serial number. */
const solax = (serial: string) => new BankReader().setText('holding', 0x0000, serial, 7);

/** a U32 (SMA) or an IEEE 754 float (Eastron) as two big-endian words */
const u32 = (v: number) =>
  v
    .toString(16)
    .padStart(8, '0')
    .replace(/(..)(?=.)/g, '$1 ');
const f32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v);
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ');
};

/** SMA Modbus profile nameplate at unit 1: 30051 device class, 30053 device type, 30055 vendor 461 (SMA) */
const sma = (deviceClass: number, model: number) =>
  new BankReader()
    .set('input', 30051, u32(deviceClass))
    .set('input', 30053, u32(model))
    .set('input', 30055, u32(461))
    .set('input', 30057, u32(3012345678));

/** Eastron: input 0x0046 the frequency, holding 0x0014 the Modbus address; `systemType`: holding 0x000A */
const eastron = (systemType?: number) => {
  const b = new BankReader().set('input', 0x0046, f32(50)).set('holding', 0x0014, f32(1));
  return systemType === undefined ? b : b.set('holding', 0x000a, f32(systemType));
};

/** KOSTAL: holding 768 "Productname", 32 characters */
const kostal = (name: string) => new BankReader().setText('holding', 768, name, 16);

const SMA_STP =
  'SMA MODBUS-HTML_STP8.0-10.0-3AV-40_GG10_V10 (michischatz/smarthomeng-smamodbus specs/, 65e2b89): 30051 8001 Solar Inverters (DevClss1), 30053 9347 / 9348';
const SMA_SI =
  'SMA MODBUS-HTML_SI44M-80H-13_32009R_V10 (same repository): 30051 8007 Battery Inverter (DevClss7), 30053 9331..9334, 9474..9476, 9486';
const SMA_SBSE =
  'burmistrzak/sma-modbus-hacs sma_modbus/sunny_boy_smart_energy.py 8f65e0d4483815a4a8dfa239fa9fe260995d55e9: DeviceClass HYBRID_INVERTER = 8009, models 19128..';
const SDM =
  'nmakel/sdm_modbus src/sdm_modbus/sdm.py ab8816f03e8d30c72c18cf5f11210dcc812785ed: SDM120 holding registers have no 0x000A System Type';
const KOSTAL =
  'kilianknoll/kostal-modbusquery 0aa1a56 (KOSTAL interface description, PLENTICORE plus / PIKO IQ); the PIKO MP plus is read over HTTP (hombach/ioBroker.kostal-piko-ba)';

const FOXESS_MODBUS =
  'nathanmarlor/foxess_modbus custom_components/foxess_modbus/inverter_profiles.py 3889808ef798c2041ab34538f30f1e5a9c90dcb8';
const FOXESS_SMART =
  'nathanmarlor/foxess_modbus tests/__snapshots__/test_entity_descriptions/test_entities[H3_SMART-AUX-latest].json 3308657d6ed65f21520544b27592ed16b69b8a34; evcc-io/evcc templates/definition/meter/fox-ess-h3-smart.yaml eb2688585dfd3620e67fb331ff51532cbe1fefe3';
const SUNSYNK = 'kellerza/sunsynk src/sunsynk/definitions3phhv.py c0174faaefdc92885126e0cd90c597e93ca528e6';
const SUNSYNK_COMMON = 'kellerza/sunsynk src/sunsynk/definitions/__init__.py 98f6ae20ba5c429a14dc1bccae503da0b8c93285';
const SOLAX_MODBUS =
  'wills106/homeassistant-solax-modbus custom_components/solax_modbus/plugin_solax.py 1d1cba8b80661a8cd2860a245a0232b173d773e4 (async_determineInverterType)';

const CASES: { what: string; bank: () => BankReader; claimed: string[]; source: string }[] = [
  { what: 'Fox ESS H3-10.0-E (H3)', bank: () => fox(' H3-10.0-E'), claimed: ['foxess-h3'], source: FOXESS_MODBUS },
  { what: 'Fox ESS AIO-H3-10.0', bank: () => fox('AIO-H3-10.0'), claimed: ['foxess-h3'], source: FOXESS_MODBUS },
  {
    what: 'Fox ESS H3-Pro-15.0: the H3 Pro, its own model (H3_PRO) and map',
    bank: () => fox('H3-Pro-15.0'),
    claimed: [],
    source: FOXESS_MODBUS,
  },
  {
    what: 'Fox ESS H3-10.0-Smart: the H3-Smart, its own model (H3_SMART) and map (38xxx/39xxx)',
    bank: () => fox('H3-10.0-Smart'),
    claimed: [],
    source: FOXESS_SMART,
  },
  {
    what: 'Fox ESS H3-8.0-SMART in capitals',
    bank: () => fox(' H3-8.0-SMART'),
    claimed: [],
    source: FOXESS_SMART,
  },
  {
    what: 'Deye device type 0x0005 (low-voltage three-phase hybrid)',
    bank: () => deye(0x0005),
    claimed: ['deye-hybrid-3p'],
    source: SUNSYNK_COMMON,
  },
  {
    what: 'Deye device type 0x0500 (the same family, type in the high byte)',
    bank: () => deye(0x0500),
    claimed: ['deye-hybrid-3p'],
    source: SUNSYNK,
  },
  {
    what: 'Deye device type 0x0600 (high-voltage three-phase hybrid: other scales, not covered)',
    bank: () => deye(0x0600),
    claimed: [],
    source: SUNSYNK,
  },
  {
    what: 'SolaX H44… (Gen4 X1 hybrid)',
    bank: () => solax('H44502I1234567'),
    claimed: ['solax-hybrid-g4'],
    source: SOLAX_MODBUS,
  },
  {
    what: 'SolaX H31… (Gen4 X3 hybrid, TIGO TSI)',
    bank: () => solax('H31234T1234567'),
    claimed: ['solax-hybrid-g4'],
    source: SOLAX_MODBUS,
  },
  {
    what: 'SolaX H34… (Gen4 X3 hybrid)',
    bank: () => solax('H34A10I1234567'),
    claimed: ['solax-hybrid-g4'],
    source: SOLAX_MODBUS,
  },
  {
    what: 'SolaX H3E… (Gen3 X3: another map)',
    bank: () => solax('H3E10C1234567'),
    claimed: [],
    source: SOLAX_MODBUS,
  },
  {
    what: 'SMA Sunny Boy Smart Energy 5.0 (device class 8009, a hybrid: the profile reads its battery wrongly)',
    bank: () => sma(8009, 19130),
    claimed: [],
    source: SMA_SBSE,
  },
  {
    what: 'SMA Sunny Tripower 10.0 (device class 8001)',
    bank: () => sma(8001, 9348),
    claimed: ['sma-modbus'],
    source: SMA_STP,
  },
  {
    what: 'SMA Sunny Island 6.0H-13 (device class 8007)',
    bank: () => sma(8007, 9475),
    claimed: ['sma-modbus'],
    source: SMA_SI,
  },
  { what: 'Eastron SDM630 (answers System Type 3)', bank: () => eastron(3), claimed: ['eastron-sdm630'], source: SDM },
  { what: 'Eastron SDM120 (no System Type)', bank: () => eastron(), claimed: ['eastron-sdm120'], source: SDM },
  {
    what: 'KOSTAL PLENTICORE plus',
    bank: () => kostal('PLENTICORE plus'),
    claimed: ['kostal-plenticore-modbus'],
    source: KOSTAL,
  },
  { what: 'KOSTAL PIKO IQ', bank: () => kostal('PIKO IQ'), claimed: ['kostal-plenticore-modbus'], source: KOSTAL },
  {
    what: 'KOSTAL PIKO MP plus (another product, no such map)',
    bank: () => kostal('PIKO MP plus'),
    claimed: [],
    source: KOSTAL,
  },
];

describe('scan identities, each against its source', () => {
  it.each(CASES.map((c) => [c.what, c] as const))('%s', async (_what, c) => {
    expect(await claimedBy(c.bank()), c.source).toEqual(c.claimed);
  });
});

describe('SMA device types print with the names the SMA documents give', () => {
  const profile = profiles.find((p) => p.name === 'sma-modbus')!;
  it.each([
    [8001, 9348, 'SUNNY TRIPOWER 10.0 (STP10.0-3AV-40)', SMA_STP],
    [8001, 9347, 'SUNNY TRIPOWER 8.0 (STP8.0-3AV-40)', SMA_STP],
    [8007, 9475, 'SI6.0H-13 (SI6.0H-13)', SMA_SI],
    [8007, 9332, 'Sunny Island 4.4M (SI 4.4M-12)', SMA_SI],
  ] as const)('class %i, type %i: %s', async (deviceClass, model, name, source) => {
    expect((await readIdentity(profile, sma(deviceClass, model), 1)).model, source).toBe(name);
  });
});

describe('a device that matches no profile', () => {
  it('is reported as not supported, with how to add its profile', () => {
    const text = formatScanReport(
      {
        found: [],
        silent: [],
        unknown: [{ unitId: 247, reason: 'no SunSpec marker at 40000; no device profile matched' }],
        failed: [],
        requests: 30,
        answered: [],
      },
      { type: 'tcp', host: '127.0.0.1', port: 502 },
    );
    expect(text).toMatch(/unit 247 +answers, but is not SunSpec and matches no device profile: not supported/);
    expect(text).toMatch(/never guesses/);
    expect(text).toMatch(/docs\/device-profiles\.md "Adding a profile"/);
  });
});
