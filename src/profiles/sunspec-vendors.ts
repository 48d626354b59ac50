/**
 * Where SunSpec devices of one vendor differ from the SunSpec models' reading, chosen from the
 * common model's manufacturer (`Mn`). Only differences a public source documents are listed;
 * site.yaml's `meterSign` overrides the choice for one device.
 *
 * Meter power sign: the 20x/21x `W` is + import at most vendors (docs/design.md's sign at the grid
 * connection point). SolarEdge's meters in the inverter's chain send + = export: evcc's
 * solaredge-hybrid template reads the grid power as 203:W with scale -1
 * (github.com/evcc-io/evcc templates/definition/meter/solaredge-hybrid.yaml).
 */
import type { MeterSign } from '../config/types.js';

export type KnownMeterSign = Exclude<MeterSign, 'auto'>;

const METER_SIGN_BY_VENDOR: readonly { manufacturer: RegExp; sign: KnownMeterSign; source: string }[] = [
  { manufacturer: /^solaredge\b/i, sign: 'export-positive', source: 'evcc solaredge-hybrid: 203:W, scale -1' },
];

/** The meter sign a vendor is documented to use, else the SunSpec reading (+ import). */
export function vendorMeterSign(manufacturer: string | undefined): { sign: KnownMeterSign; source?: string } {
  const hit =
    manufacturer === undefined ? undefined : METER_SIGN_BY_VENDOR.find((v) => v.manufacturer.test(manufacturer.trim()));
  return hit ? { sign: hit.sign, source: hit.source } : { sign: 'import-positive' };
}

/** The sign a device is read with: site.yaml's choice, or the vendor's when it says auto (the default). */
export function meterSignOf(configured: MeterSign | undefined, manufacturer: string | undefined): KnownMeterSign {
  return configured === undefined || configured === 'auto' ? vendorMeterSign(manufacturer).sign : configured;
}
