/**
 * sitegw's schemas (src/gridop/schema) against IEEE's own sep.xsd with the CSIP-AUS schema, which
 * may not be shipped (docs/grid-operator.md "Schemas"): with SITEGW_SEP_XSD_DIR naming a folder
 * holding sep.xsd, csipaus-core.xsd and csipaus-ext.xsd (as bsgip/envoy-schema publishes them),
 * every published example body and every kind of body the client writes gets the same verdict
 * from both. Without the folder the test is skipped: CI has no copy of IEEE's file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Mirror } from '../../src/gridop/mirror.js';
import {
  type DerReport,
  derAvailabilityBody,
  derCapabilityBody,
  derSettingsBody,
  derStatusBody,
} from '../../src/gridop/report.js';
import { connectionPointBody, endDeviceBody, RESPONSE_STATUS, responseBody } from '../../src/gridop/resources.js';
import { validateXml } from '../../src/gridop/validate.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

const DIR = process.env.SITEGW_SEP_XSD_DIR;
const SITE: DerReport = {
  type: 83,
  ratedW: 100_000,
  ratedVA: 100_000,
  maxChargeW: 5000,
  maxDischargeW: 5000,
  capacityWh: 13_500,
  connected: true,
  operating: false,
  socPercent: 12.5,
  availableW: 0,
  doeModes: { exportW: true, importW: false, generationW: true, loadW: false },
};
const LFDI = '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5';
/** a point with one interval of samples: its definition and its readings */
function mirror(point: 'site' | 'der'): [string, string] {
  const m = new Mirror(point, LFDI, 62345);
  m.sample({ powerW: -1500, powerL1W: -1500, voltageL1V: 231.2, frequencyHz: 49.98 }, 1700000000);
  m.sample({ powerW: 200, powerL1W: 200, voltageL1V: 229.9, frequencyHz: 50.01 }, 1700000005);
  return [m.definitionBody(), m.takeReadings(1700000300, 1700000600)!];
}
const official = DIR ? join(DIR, 'csipaus-core.xsd') : '';
const HAVE = HAVE_XMLLINT && DIR !== undefined && existsSync(official);

describe.skipIf(!HAVE)("sitegw's schemas give IEEE's verdicts", () => {
  const published = new URL('../fixtures/gridop/published/', import.meta.url);
  const bodies: [string, string][] = [
    ...readdirSync(published)
      .filter((f) => f.endsWith('.xml'))
      .map((f): [string, string] => [f, readFileSync(new URL(f, published), 'utf8')]),
    [
      'EndDevice',
      endDeviceBody({ lfdi: '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5', sfdi: '167261211391' }, 1700000000),
    ],
    ['ConnectionPoint', connectionPointBody('4102345678')],
    ...(['site', 'der'] as const).flatMap((p): [string, string][] => {
      const [definition, readings] = mirror(p);
      return [
        [`MirrorUsagePoint (${p})`, definition],
        [`MirrorMeterReadingList (${p})`, readings],
      ];
    }),
    ['DERCapability', derCapabilityBody(SITE)],
    ['DERSettings', derSettingsBody(SITE, 1)],
    ['DERStatus', derStatusBody(SITE, 1)],
    ['DERAvailability', derAvailabilityBody(SITE, 1)],
    [
      'DERControlResponse',
      responseBody({
        lfdi: '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5',
        mRID: 'AB12',
        status: RESPONSE_STATUS.started,
        at: 1,
      }),
    ],
  ];
  it.each(bodies)('%s', async (name, body) => {
    const ours = await validateXml(body);
    const theirs = await validateXml(body, official);
    expect(ours.ok).toBe(theirs.ok);
    // what sitegw writes must be valid, not merely judged alike
    if (!name.endsWith('.xml')) expect(theirs, name).toEqual({ ok: true });
  });
});
