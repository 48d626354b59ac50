/**
 * What the client reports of the site's DER to the server (CSIP-AUS asks for all four): its
 * DERCapability (ratings, the modes it carries out), DERSettings (the settings in use),
 * DERStatus (connected, operating, state of charge) and DERAvailability (the power it could still
 * give). The values come from the site through a `DerReport` the composition root builds; the
 * bodies are IEEE 2030.5's, with the CSIP-AUS doeModes bitmaps.
 */
import { CSIPAUS_NS, SEP_NS, writeXml, type XmlNode } from './xml.js';

/** The site's DER as the server is told of it. */
export interface DerReport {
  /** DERType: 4 PV system, 80 other storage, 83 combined PV and storage, 1 virtual or mixed */
  type: number;
  /** the inverters' rated AC output, W */
  ratedW: number;
  ratedVA?: number;
  maxChargeW?: number;
  maxDischargeW?: number;
  /** the batteries' usable capacity, Wh */
  capacityWh?: number;
  /** connected to the grid now */
  connected: boolean;
  /** producing or storing now */
  operating: boolean;
  /** the batteries' state of charge, 0..100 */
  socPercent?: number;
  /** what the site could still produce above what it produces now, W */
  availableW?: number;
  /** the limits sitegw carries out (csipaus doeModesSupported bits): export, import, generation, load */
  doeModes: { exportW: boolean; importW: boolean; generationW: boolean; loadW: boolean };
}

/** IEEE 2030.5 value + power-of-ten multiplier, the value within its integer type. */
export function scaled(v: number, max = 32767): XmlNode[] {
  let multiplier = 0;
  let value = Math.round(v);
  while (Math.abs(value) > max && multiplier < 9) {
    multiplier++;
    value = Math.round(v / 10 ** multiplier);
  }
  return [
    ['multiplier', {}, multiplier],
    ['value', {}, value],
  ];
}

const unsigned = (v: number) => scaled(v, 65535);
const hex = (n: number, bytes: number) =>
  n
    .toString(16)
    .toUpperCase()
    .padStart(bytes * 2, '0');

/** csipaus doeModes bits: 0 export, 1 import, 2 generation, 3 load (the CSIP-AUS extension schema). */
export function doeModesBits(m: DerReport['doeModes']): string {
  return hex((m.exportW ? 1 : 0) | (m.importW ? 2 : 0) | (m.generationW ? 4 : 0) | (m.loadW ? 8 : 0), 1);
}

const NS = { xmlns: SEP_NS, 'xmlns:csipaus': CSIPAUS_NS };

/**
 * modesSupported is 0: of IEEE 2030.5's own modes (DERControlType) sitegw carries out none; its
 * limits are CSIP-AUS's, said in doeModesSupported.
 */
export function derCapabilityBody(r: DerReport): string {
  const opt = (name: string, v: number | undefined, enc: (v: number) => XmlNode[]): XmlNode | undefined =>
    v === undefined ? undefined : [name, {}, ...enc(v)];
  return writeXml([
    'DERCapability',
    NS,
    ['modesSupported', {}, hex(0, 4)],
    opt('rtgMaxChargeRateW', r.maxChargeW, scaled),
    opt('rtgMaxDischargeRateW', r.maxDischargeW, scaled),
    opt('rtgMaxVA', r.ratedVA, unsigned),
    ['rtgMaxW', {}, ...scaled(r.ratedW)],
    opt('rtgMaxWh', r.capacityWh, unsigned),
    ['type', {}, r.type],
    ['csipaus:doeModesSupported', {}, doeModesBits(r.doeModes)],
  ]);
}

/** setGradW 0: sitegw sets no ramp of its own (IEEE 2030.5: 0 = no limit). */
export function derSettingsBody(r: DerReport, at: number): string {
  return writeXml([
    'DERSettings',
    NS,
    ['modesEnabled', {}, hex(0, 4)],
    ['setGradW', {}, 0],
    r.maxChargeW === undefined ? undefined : ['setMaxChargeRateW', {}, ...scaled(r.maxChargeW)],
    r.maxDischargeW === undefined ? undefined : ['setMaxDischargeRateW', {}, ...scaled(r.maxDischargeW)],
    ['setMaxW', {}, ...scaled(r.ratedW)],
    ['updatedTime', {}, at],
    ['csipaus:doeModesEnabled', {}, doeModesBits(r.doeModes)],
  ]);
}

/** genConnectStatus bits: 0 connected, 1 available, 2 operating; operationalModeStatus 2 = operational, 1 = off. */
export function derStatusBody(r: DerReport, at: number): string {
  const connect = (r.connected ? 1 | 2 : 0) | (r.operating ? 4 : 0);
  return writeXml([
    'DERStatus',
    { xmlns: SEP_NS },
    ['genConnectStatus', {}, ['dateTime', {}, at], ['value', {}, hex(connect, 1)]],
    ['operationalModeStatus', {}, ['dateTime', {}, at], ['value', {}, r.operating ? 2 : 1]],
    ['readingTime', {}, at],
    r.socPercent === undefined
      ? undefined
      : ['stateOfChargeStatus', {}, ['dateTime', {}, at], ['value', {}, Math.round(r.socPercent * 100)]],
  ]);
}

export function derAvailabilityBody(r: DerReport, at: number): string {
  return writeXml([
    'DERAvailability',
    { xmlns: SEP_NS },
    ['readingTime', {}, at],
    r.availableW === undefined ? undefined : ['statWAvail', {}, ...scaled(r.availableW)],
  ]);
}
