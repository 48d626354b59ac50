/**
 * The IEEE 2030.5 resources the client reads, as plain data, and the bodies it writes. Names and
 * meanings are IEEE 2030.5-2018's (sep.xsd 2.1.0) and CSIP-AUS's (the csipaus extension); the
 * schema sitegw validates them against is ./schema/sep-subset.xsd. Readers look elements up by
 * name, so a body whose only fault is element order (two published distributor examples have one,
 * test/fixtures/gridop/README.md) is still read; a missing or unreadable value the client needs is
 * a GRIDOP_INVALID_XML error.
 */
import { GridOpError } from './errors.js';
import { CSIPAUS_NS, child, childrenNamed, SEP_NS, textOf, writeXml, type XmlElement, type XmlNode } from './xml.js';

export interface Link {
  href: string;
  /** a list link's count of items on the server */
  all?: number;
}

export interface ListPage<T> {
  href?: string;
  all: number;
  results: number;
  /** the list's pollRate in seconds, when the server gives one */
  pollRate?: number;
  items: T[];
}

export interface DeviceCapability {
  pollRate?: number;
  timeLink?: Link;
  endDeviceListLink?: Link;
  mirrorUsagePointListLink?: Link;
}

export interface TimeResource {
  /** the server's clock, seconds since the epoch */
  currentTime: number;
  pollRate?: number;
}

export interface EndDevice {
  href?: string;
  lfdi?: string;
  sfdi: string;
  enabled?: boolean;
  fsaListLink?: Link;
  derListLink?: Link;
  registrationLink?: Link;
  connectionPointLink?: Link;
  /** seconds between the client's posts of what it reports, as the server asks */
  postRate?: number;
}

/** One DER of an EndDevice: where its capability, settings, status and availability go. */
export interface Der {
  href?: string;
  capabilityLink?: Link;
  settingsLink?: Link;
  statusLink?: Link;
  availabilityLink?: Link;
}

export interface FunctionSetAssignments {
  href?: string;
  mRID: string;
  derProgramListLink?: Link;
}

export interface DerProgram {
  href?: string;
  mRID: string;
  description?: string;
  /** lower wins (IEEE 2030.5 §10.10: a program's primacy orders it against the others) */
  primacy: number;
  defaultDerControlLink?: Link;
  derControlListLink?: Link;
}

/** The parts of DERControlBase sitegw acts on, in watts and booleans: the limits it hands on. */
export interface ControlValues {
  /** csipaus:opModExpLimW: most power exported at the connection point */
  exportW?: number;
  /** csipaus:opModImpLimW: most power imported at the connection point */
  importW?: number;
  /** csipaus:opModGenLimW: most power the site's generation may produce */
  generationW?: number;
  /** csipaus:opModLoadLimW: most power the site's controllable load may take */
  loadW?: number;
  /** opModConnect: false = disconnect from the grid (cease to energize and open) */
  connect?: boolean;
  /** opModEnergize: false = cease to energize */
  energize?: boolean;
}

export interface ControlBase extends ControlValues {
  /** opMods sitegw does not carry out (opModFixedW, opModTargetW, …), by element name */
  unsupported: string[];
}

/** EventStatus.currentStatus (IEEE 2030.5 §12.1 Event) */
export const EVENT_STATUS = {
  scheduled: 0,
  active: 1,
  cancelled: 2,
  cancelledWithRandomization: 3,
  superseded: 4,
} as const;

export interface DerControl {
  href?: string;
  mRID: string;
  description?: string;
  /** seconds since the epoch */
  creationTime: number;
  currentStatus: number;
  /** when the status was set, seconds since the epoch */
  statusTime: number;
  /** seconds since the epoch */
  start: number;
  /** seconds */
  duration: number;
  randomizeStart?: number;
  randomizeDuration?: number;
  replyTo?: string;
  /** bit 0: say received; bit 1: say started, completed and the like (IEEE 2030.5 responseRequired) */
  responseRequired: number;
  base: ControlBase;
}

export interface DefaultDerControl {
  href?: string;
  mRID: string;
  base: ControlBase;
}

/** Response.status (IEEE 2030.5 Table 27, DER function set) */
export const RESPONSE_STATUS = {
  received: 1,
  started: 2,
  completed: 3,
  cancelled: 6,
  superseded: 7,
  /** the control holds nothing this device does */
  notApplicable: 252,
  /** the control cannot be carried out as written */
  invalid: 253,
  /** received after its end */
  expired: 254,
} as const;
export type ResponseStatus = (typeof RESPONSE_STATUS)[keyof typeof RESPONSE_STATUS];

// ---- reading

function invalid(what: string): never {
  throw new GridOpError('GRIDOP_INVALID_XML', what);
}

function expectRoot(el: XmlElement, name: string, ns = SEP_NS): void {
  if (el.name !== name || el.ns !== ns) invalid(`expected a ${name}, got ${el.name} (${el.ns || 'no namespace'})`);
}

const INTEGER = /^[+-]?\d+$/;

function int(el: XmlElement, name: string, ns = SEP_NS): number | undefined {
  const t = textOf(el, name, ns);
  if (t === undefined) return undefined;
  if (!INTEGER.test(t)) invalid(`${el.name}.${name} is not a whole number: '${t.slice(0, 40)}'`);
  return Number(t);
}

function required(el: XmlElement, name: string): number {
  return int(el, name) ?? invalid(`${el.name} has no ${name}`);
}

function attrInt(el: XmlElement, name: string): number | undefined {
  const v = el.attrs[name];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) invalid(`${el.name}@${name} is not a whole number: '${v.slice(0, 40)}'`);
  return Number(v);
}

function bool(el: XmlElement, name: string): boolean | undefined {
  const t = textOf(el, name);
  if (t === undefined) return undefined;
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return invalid(`${el.name}.${name} is not a boolean: '${t.slice(0, 40)}'`);
}

function link(el: XmlElement, name: string, ns = SEP_NS): Link | undefined {
  const l = child(el, name, ns);
  if (!l) return undefined;
  const href = l.attrs.href ?? invalid(`${el.name}.${name} has no href`);
  const all = attrInt(l, 'all');
  return all === undefined ? { href } : { href, all };
}

function mrid(el: XmlElement): string {
  const t = textOf(el, 'mRID') ?? invalid(`${el.name} has no mRID`);
  if (!/^[0-9A-Fa-f]{1,32}$/.test(t)) invalid(`${el.name}.mRID is not hex: '${t.slice(0, 40)}'`);
  return t.toUpperCase();
}

function listOf<T>(el: XmlElement, listName: string, itemName: string, read: (e: XmlElement) => T): ListPage<T> {
  expectRoot(el, listName);
  const all = attrInt(el, 'all') ?? invalid(`${listName} has no all`);
  const results = attrInt(el, 'results') ?? invalid(`${listName} has no results`);
  const pollRate = attrInt(el, 'pollRate');
  const page: ListPage<T> = { all, results, items: childrenNamed(el, itemName).map(read) };
  if (el.attrs.href !== undefined) page.href = el.attrs.href;
  if (pollRate !== undefined) page.pollRate = pollRate;
  return page;
}

/** Watts of an ActivePower (value × 10^multiplier). */
function activePower(el: XmlElement, name: string): number | undefined {
  const p = child(el, name, CSIPAUS_NS);
  if (!p) return undefined;
  const multiplier = required(p, 'multiplier');
  const value = required(p, 'value');
  if (multiplier < -9 || multiplier > 9) invalid(`${name}.multiplier ${multiplier} is outside -9..9`);
  return value * 10 ** multiplier;
}

const ACTED_ON = new Set([
  'opModConnect',
  'opModEnergize',
  'opModImpLimW',
  'opModExpLimW',
  'opModGenLimW',
  'opModLoadLimW',
]);

export function readControlBase(el: XmlElement | undefined): ControlBase {
  if (!el) return invalid('no DERControlBase');
  const base: ControlBase = { unsupported: [] };
  const set = <K extends keyof ControlBase>(k: K, v: ControlBase[K] | undefined) => {
    if (v !== undefined) base[k] = v;
  };
  set('exportW', activePower(el, 'opModExpLimW'));
  set('importW', activePower(el, 'opModImpLimW'));
  set('generationW', activePower(el, 'opModGenLimW'));
  set('loadW', activePower(el, 'opModLoadLimW'));
  set('connect', bool(el, 'opModConnect'));
  set('energize', bool(el, 'opModEnergize'));
  base.unsupported = el.children.filter((c) => c.name.startsWith('opMod') && !ACTED_ON.has(c.name)).map((c) => c.name);
  return base;
}

export function readDeviceCapability(el: XmlElement): DeviceCapability {
  expectRoot(el, 'DeviceCapability');
  const out: DeviceCapability = {};
  const pollRate = attrInt(el, 'pollRate');
  if (pollRate !== undefined) out.pollRate = pollRate;
  const t = link(el, 'TimeLink');
  if (t) out.timeLink = t;
  const e = link(el, 'EndDeviceListLink');
  if (e) out.endDeviceListLink = e;
  const m = link(el, 'MirrorUsagePointListLink');
  if (m) out.mirrorUsagePointListLink = m;
  return out;
}

export function readTime(el: XmlElement): TimeResource {
  expectRoot(el, 'Time');
  const out: TimeResource = { currentTime: required(el, 'currentTime') };
  const pollRate = attrInt(el, 'pollRate');
  if (pollRate !== undefined) out.pollRate = pollRate;
  return out;
}

export function readEndDevice(el: XmlElement): EndDevice {
  const sfdi = textOf(el, 'sFDI') ?? invalid('EndDevice has no sFDI');
  const out: EndDevice = { sfdi };
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  // lFDI as the schema spells it; 'LFDI' as one published example does
  const lfdi = textOf(el, 'lFDI') ?? textOf(el, 'LFDI');
  if (lfdi !== undefined) out.lfdi = lfdi.toUpperCase();
  const enabled = bool(el, 'enabled');
  if (enabled !== undefined) out.enabled = enabled;
  const fsa = link(el, 'FunctionSetAssignmentsListLink');
  if (fsa) out.fsaListLink = fsa;
  const der = link(el, 'DERListLink');
  if (der) out.derListLink = der;
  const rg = link(el, 'RegistrationLink');
  if (rg) out.registrationLink = rg;
  const cp = link(el, 'ConnectionPointLink', CSIPAUS_NS);
  if (cp) out.connectionPointLink = cp;
  const postRate = int(el, 'postRate');
  if (postRate !== undefined) out.postRate = postRate;
  return out;
}

export function readDer(el: XmlElement): Der {
  const out: Der = {};
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  const links = [
    ['capabilityLink', 'DERCapabilityLink'],
    ['settingsLink', 'DERSettingsLink'],
    ['statusLink', 'DERStatusLink'],
    ['availabilityLink', 'DERAvailabilityLink'],
  ] as const;
  for (const [key, name] of links) {
    const l = link(el, name);
    if (l) out[key] = l;
  }
  return out;
}

export const readDerList = (el: XmlElement) => listOf(el, 'DERList', 'DER', readDer);

export const readEndDeviceList = (el: XmlElement) => listOf(el, 'EndDeviceList', 'EndDevice', readEndDevice);

export function readFsa(el: XmlElement): FunctionSetAssignments {
  const out: FunctionSetAssignments = { mRID: mrid(el) };
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  const d = link(el, 'DERProgramListLink');
  if (d) out.derProgramListLink = d;
  return out;
}

export const readFsaList = (el: XmlElement) =>
  listOf(el, 'FunctionSetAssignmentsList', 'FunctionSetAssignments', readFsa);

export function readDerProgram(el: XmlElement): DerProgram {
  const out: DerProgram = { mRID: mrid(el), primacy: required(el, 'primacy') };
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  const description = textOf(el, 'description');
  if (description !== undefined) out.description = description;
  const d = link(el, 'DefaultDERControlLink');
  if (d) out.defaultDerControlLink = d;
  const c = link(el, 'DERControlListLink');
  if (c) out.derControlListLink = c;
  return out;
}

export const readDerProgramList = (el: XmlElement) => listOf(el, 'DERProgramList', 'DERProgram', readDerProgram);

export function readDerControl(el: XmlElement): DerControl {
  const status = child(el, 'EventStatus') ?? invalid('DERControl has no EventStatus');
  const interval = child(el, 'interval') ?? invalid('DERControl has no interval');
  const rr = el.attrs.responseRequired ?? '00';
  if (!/^[0-9A-Fa-f]{1,2}$/.test(rr)) invalid(`DERControl@responseRequired is not one hex byte: '${rr.slice(0, 10)}'`);
  const out: DerControl = {
    mRID: mrid(el),
    creationTime: required(el, 'creationTime'),
    currentStatus: required(status, 'currentStatus'),
    statusTime: required(status, 'dateTime'),
    start: required(interval, 'start'),
    duration: required(interval, 'duration'),
    responseRequired: Number.parseInt(rr, 16),
    base: readControlBase(child(el, 'DERControlBase')),
  };
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  if (el.attrs.replyTo !== undefined) out.replyTo = el.attrs.replyTo;
  const description = textOf(el, 'description');
  if (description !== undefined) out.description = description;
  const rs = int(el, 'randomizeStart');
  if (rs !== undefined) out.randomizeStart = rs;
  const rd = int(el, 'randomizeDuration');
  if (rd !== undefined) out.randomizeDuration = rd;
  return out;
}

export const readDerControlList = (el: XmlElement) => listOf(el, 'DERControlList', 'DERControl', readDerControl);

export function readDefaultDerControl(el: XmlElement): DefaultDerControl {
  expectRoot(el, 'DefaultDERControl');
  const out: DefaultDerControl = { mRID: mrid(el), base: readControlBase(child(el, 'DERControlBase')) };
  if (el.attrs.href !== undefined) out.href = el.attrs.href;
  return out;
}

// ---- writing

const XMLNS = { xmlns: SEP_NS };

/** The EndDevice the client registers (POST to the EndDeviceList): its SFDI and LFDI. */
export function endDeviceBody(id: { lfdi: string; sfdi: string }, changedTime: number): string {
  return writeXml(['EndDevice', XMLNS, ['lFDI', {}, id.lfdi], ['sFDI', {}, id.sfdi], ['changedTime', {}, changedTime]]);
}

/** The csipaus ConnectionPoint (PUT to the EndDevice's ConnectionPointLink): the site's NMI. */
export function connectionPointBody(nmi: string): string {
  return writeXml(['ConnectionPoint', { xmlns: CSIPAUS_NS }, ['connectionPointId', {}, nmi]]);
}

/** A DERControlResponse (POST to the control's replyTo). */
export function responseBody(r: { lfdi: string; mRID: string; status: ResponseStatus; at: number }): string {
  const node: XmlNode = [
    'DERControlResponse',
    XMLNS,
    ['createdDateTime', {}, r.at],
    ['endDeviceLFDI', {}, r.lfdi],
    ['status', {}, r.status],
    ['subject', {}, r.mRID],
  ];
  return writeXml(node);
}
