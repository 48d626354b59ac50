/**
 * A small IEEE 2030.5 / CSIP-AUS server for the grid-operator client's end-to-end tests: HTTPS
 * with client certificates (test/support/csip-pki.ts), the resources a distributor's server
 * offers (DeviceCapability, Time, EndDeviceList with registration by POST, the csipaus
 * ConnectionPoint, FunctionSetAssignmentsList, DERProgramList, DERControlList, DefaultDERControl,
 * the response collection), lists paged at most `pageMax` items whatever the client asks, and
 * every body it sends or receives validated against the schemas (src/gridop/schema): what fails
 * is kept in `invalid`, which a test expects empty. The LFDI a client registers must be its TLS
 * certificate's, as a real server checks.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { certificateFingerprint, lfdiOf } from '../../src/gridop/identity.js';
import { scaled } from '../../src/gridop/report.js';
import type { ControlValues } from '../../src/gridop/resources.js';
import { validateXml } from '../../src/gridop/validate.js';
import {
  CSIPAUS_NS,
  child,
  parseXml,
  SEP_NS,
  textOf,
  writeXml,
  type XmlElement,
  type XmlNode,
} from '../../src/gridop/xml.js';

export type Limits = ControlValues;

export interface ControlSpec {
  mRID: string;
  /** seconds since the epoch */
  start: number;
  duration: number;
  limits: Limits;
  /** 0 scheduled, 1 active, 2 cancelled, 3 cancelled with randomisation, 4 superseded */
  status?: number;
  creationTime?: number;
  randomizeStart?: number;
  responseRequired?: string;
}

export interface ProgramSpec {
  mRID: string;
  primacy: number;
  controls: ControlSpec[];
  defaultLimits?: Limits;
}

export interface PostedResponse {
  href: string;
  lfdi: string;
  subject: string;
  status: number;
}

export interface SepServer {
  url: string;
  programs: ProgramSpec[];
  /** registered EndDevices by their LFDI */
  endDevices: Map<string, { sfdi: string; nmi?: string }>;
  responses: PostedResponse[];
  requests: string[];
  /** bodies sent or received that do not validate: '<what>: <errors>' */
  invalid: string[];
  /** server clock minus real time, seconds (its Time resource says it) */
  offsetSeconds: number;
  /** most items one page carries */
  pageMax: number;
  /** the pollRate of the DERProgramList (and the programs and controls below it) */
  pollRate: number;
  /** the EndDevice's postRate: how often the client is to report its DER's status */
  postRate: number;
  /** the last DERCapability, DERSettings, DERStatus and DERAvailability put, by resource name, and how many of each */
  reports: Map<string, { el: XmlElement; count: number }>;
  /** the MirrorUsagePoints clients created, by href, with the readings posted to each */
  mirrors: Map<string, MirrorState>;
  /** the postRate the server sets on the MirrorUsagePoints it creates; undefined: none (the EndDevice's holds) */
  mirrorPostRate: number | undefined;
  /** answers a GET of this path with this status and raw body instead of the resource (a faulty server) */
  faults: Map<string, { status: number; body: string }>;
  /** stops answering (connections refused), keeping everything it holds, as a server gone for a while */
  down(): Promise<void>;
  /** answers again on the same port */
  up(): Promise<void>;
  close(): Promise<void>;
}

export interface MirrorState {
  lfdi: string;
  mRID: string;
  roleFlags: string;
  /** each MirrorMeterReading's ReadingType, by the reading's mRID */
  readingTypes: Map<string, XmlElement>;
  /** every reading posted, in order */
  readings: { mRID: string; value: number; start: number; duration: number }[];
  /** POSTs of readings, each a list or one reading */
  posts: number;
}

export interface SepServerOptions {
  cert: string;
  key: string;
  /** the CA whose client certificates are accepted */
  ca: string;
  /** TLS ciphers the server accepts (default: Node's) */
  ciphers?: string;
  port?: number;
}

const now = () => Math.floor(Date.now() / 1000);

function controlBase(l: Limits): XmlNode {
  const ap = (name: string, w: number | undefined): XmlNode | undefined =>
    w === undefined ? undefined : [`csipaus:${name}`, {}, ...scaled(w)];
  return [
    'DERControlBase',
    {},
    l.connect === undefined ? undefined : ['opModConnect', {}, String(l.connect)],
    l.energize === undefined ? undefined : ['opModEnergize', {}, String(l.energize)],
    ap('opModImpLimW', l.importW),
    ap('opModExpLimW', l.exportW),
    ap('opModGenLimW', l.generationW),
    ap('opModLoadLimW', l.loadW),
  ];
}

const NS = { xmlns: SEP_NS, 'xmlns:csipaus': CSIPAUS_NS };

export async function startSepServer(opts: SepServerOptions): Promise<SepServer> {
  const state: Omit<SepServer, 'url' | 'close' | 'down' | 'up'> = {
    programs: [],
    endDevices: new Map(),
    responses: [],
    requests: [],
    invalid: [],
    offsetSeconds: 0,
    pageMax: 2,
    pollRate: 1,
    faults: new Map(),
    postRate: 1,
    reports: new Map(),
    mirrors: new Map(),
    mirrorPostRate: undefined,
  };
  // hrefs are never used twice: a point forgotten and made again gets a new one
  let mupCount = 0;
  const edevId = (lfdi: string) => [...state.endDevices.keys()].indexOf(lfdi) + 1;
  const lfdiOfId = (id: number) => [...state.endDevices.keys()][id - 1];

  function page<T>(
    url: URL,
    name: string,
    items: T[],
    item: (t: T) => XmlNode,
    attrs: Record<string, string | number> = {},
  ): XmlNode {
    const s = Number(url.searchParams.get('s') ?? 0);
    // IEEE 2030.5 §5.5: without l the server returns one item
    const l = Math.min(Number(url.searchParams.get('l') ?? 1), state.pageMax);
    const slice = items.slice(s, s + l);
    return [
      name,
      { ...NS, href: url.pathname, all: items.length, results: slice.length, ...attrs },
      ...slice.map(item),
    ];
  }

  function control(p: number, c: ControlSpec): XmlNode {
    return [
      'DERControl',
      { href: `/derp/${p}/derc/${c.mRID}`, replyTo: '/rsp', responseRequired: c.responseRequired ?? '03' },
      ['mRID', {}, c.mRID],
      ['creationTime', {}, c.creationTime ?? c.start - 60],
      [
        'EventStatus',
        {},
        ['currentStatus', {}, c.status ?? 0],
        ['dateTime', {}, now() + state.offsetSeconds],
        ['potentiallySuperseded', {}, 'false'],
      ],
      ['interval', {}, ['duration', {}, c.duration], ['start', {}, c.start]],
      c.randomizeStart === undefined ? undefined : ['randomizeStart', {}, c.randomizeStart],
      controlBase(c.limits),
    ];
  }

  function resource(url: URL, lfdi: string): XmlNode | null {
    const path = url.pathname;
    const id = edevId(lfdi);
    let m: RegExpMatchArray | null;
    if (path === '/dcap') {
      return [
        'DeviceCapability',
        { ...NS, href: '/dcap', pollRate: 60 },
        ['TimeLink', { href: '/tm' }],
        ['EndDeviceListLink', { href: '/edev', all: state.endDevices.size }],
        ['MirrorUsagePointListLink', { href: '/mup', all: state.mirrors.size }],
      ];
    }
    const mup = state.mirrors.get(path);
    if (mup && mup.lfdi === lfdi) {
      return [
        'MirrorUsagePoint',
        { xmlns: SEP_NS, href: path },
        ['mRID', {}, mup.mRID],
        ['roleFlags', {}, mup.roleFlags],
        ['serviceCategoryKind', {}, 0],
        ['status', {}, 1],
        ['deviceLFDI', {}, mup.lfdi],
        state.mirrorPostRate === undefined ? undefined : ['postRate', {}, state.mirrorPostRate],
      ];
    }
    if (path === '/tm') {
      const t = now() + state.offsetSeconds;
      return [
        'Time',
        { ...NS, href: '/tm', pollRate: 60 },
        ['currentTime', {}, t],
        ['dstEndTime', {}, 0],
        ['dstOffset', {}, 0],
        ['dstStartTime', {}, 0],
        ['quality', {}, 4],
        ['tzOffset', {}, 34200],
      ];
    }
    const edev = (n: number): XmlNode => {
      const l = lfdiOfId(n)!;
      return [
        'EndDevice',
        { href: `/edev/${n}` },
        ['DERListLink', { href: `/edev/${n}/der`, all: 1 }],
        ['lFDI', {}, l],
        ['sFDI', {}, state.endDevices.get(l)!.sfdi],
        ['changedTime', {}, now()],
        ['enabled', {}, 'true'],
        ['FunctionSetAssignmentsListLink', { href: `/edev/${n}/fsa`, all: 1 }],
        ['postRate', {}, state.postRate],
        ['csipaus:ConnectionPointLink', { href: `/edev/${n}/cp` }],
      ];
    };
    if (path === '/edev') {
      // a client sees only its own EndDevice, as CSIP-AUS servers do
      return page(url, 'EndDeviceList', id > 0 ? [id] : [], edev, { pollRate: 60 });
    }
    if ((m = path.match(/^\/edev\/(\d+)$/)) && Number(m[1]) === id) {
      const [, attrs, ...rest] = edev(id);
      return ['EndDevice', { ...NS, ...attrs }, ...rest];
    }
    if ((m = path.match(/^\/edev\/(\d+)\/cp$/)) && Number(m[1]) === id) {
      const nmi = state.endDevices.get(lfdi)!.nmi;
      return ['csipaus:ConnectionPoint', { 'xmlns:csipaus': CSIPAUS_NS }, ['csipaus:connectionPointId', {}, nmi ?? '']];
    }
    if ((m = path.match(/^\/edev\/(\d+)\/der$/)) && Number(m[1]) === id) {
      const der = `/edev/${id}/der/1`;
      return page(url, 'DERList', [der], (h) => [
        'DER',
        { href: h },
        ['DERAvailabilityLink', { href: `${h}/dera` }],
        ['DERCapabilityLink', { href: `${h}/dercap` }],
        ['DERSettingsLink', { href: `${h}/derg` }],
        ['DERStatusLink', { href: `${h}/ders` }],
      ]);
    }
    if ((m = path.match(/^\/edev\/(\d+)\/fsa$/)) && Number(m[1]) === id) {
      return page(url, 'FunctionSetAssignmentsList', [1], () => [
        'FunctionSetAssignments',
        { href: '/fsa/1' },
        ['DERProgramListLink', { href: '/derp', all: state.programs.length }],
        ['mRID', {}, 'F5A1'],
      ]);
    }
    if (path === '/derp') {
      return page(
        url,
        'DERProgramList',
        state.programs.map((p, i) => ({ p, i })),
        ({ p, i }) => [
          'DERProgram',
          { href: `/derp/${i}` },
          ['mRID', {}, p.mRID],
          p.defaultLimits ? ['DefaultDERControlLink', { href: `/derp/${i}/dderc` }] : undefined,
          ['DERControlListLink', { href: `/derp/${i}/derc`, all: p.controls.length }],
          ['primacy', {}, p.primacy],
        ],
        { pollRate: state.pollRate },
      );
    }
    if ((m = path.match(/^\/derp\/(\d+)\/derc$/))) {
      const i = Number(m[1]);
      const p = state.programs[i];
      return p ? page(url, 'DERControlList', p.controls, (c) => control(i, c)) : null;
    }
    if ((m = path.match(/^\/derp\/(\d+)\/dderc$/))) {
      const p = state.programs[Number(m[1])];
      if (!p?.defaultLimits) return null;
      return ['DefaultDERControl', { ...NS, href: path }, ['mRID', {}, `DEF${m[1]}`], controlBase(p.defaultLimits)];
    }
    return null;
  }

  // with IEEE's own schema at hand (docs/grid-operator.md "Schemas"), every body is checked against it too
  const official = process.env.SITEGW_SEP_XSD_DIR
    ? join(process.env.SITEGW_SEP_XSD_DIR, 'csipaus-core.xsd')
    : undefined;
  const check = async (what: string, body: string) => {
    const v = await validateXml(body);
    if (!v.ok) state.invalid.push(`${what}: ${v.errors.join('; ')}`);
    if (official) {
      const ieee = await validateXml(body, official);
      if (!ieee.ok) state.invalid.push(`${what} (IEEE's sep.xsd): ${ieee.errors.join('; ')}`);
    }
    return v.ok;
  };

  const server: Server = createServer(
    {
      cert: readFileSync(opts.cert),
      key: readFileSync(opts.key),
      ca: readFileSync(opts.ca),
      requestCert: true,
      rejectUnauthorized: true,
      ...(opts.ciphers ? { ciphers: opts.ciphers, maxVersion: 'TLSv1.2' as const } : {}),
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          const url = new URL(req.url ?? '/', 'https://localhost');
          state.requests.push(`${req.method} ${url.pathname}`);
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          const lfdi = lfdiOf(certificateFingerprint(new X509Certificate(peer.raw).raw));
          const body = Buffer.concat(chunks).toString('utf8');
          const reply = async (status: number, node?: XmlNode, headers: Record<string, string> = {}) => {
            const text = node ? `<?xml version="1.0" encoding="UTF-8"?>\n${writeXml(node)}` : '';
            if (text) await check(`${req.method} ${url.pathname} answer`, text);
            res.writeHead(status, { 'Content-Type': 'application/sep+xml', ...headers });
            res.end(text);
          };
          const fault = req.method === 'GET' ? state.faults.get(url.pathname) : undefined;
          if (fault) {
            res.writeHead(fault.status, { 'Content-Type': 'application/sep+xml' });
            res.end(fault.body);
            return;
          }
          if (req.method === 'GET') {
            const node = resource(url, lfdi);
            return node ? reply(200, node) : reply(404);
          }
          if (!(await check(`${req.method} ${url.pathname}`, body))) return reply(400);
          const el = parseXml(body);
          if (req.method === 'POST' && url.pathname === '/edev') {
            if (textOf(el, 'lFDI') !== lfdi) return reply(400);
            if (!state.endDevices.has(lfdi)) state.endDevices.set(lfdi, { sfdi: textOf(el, 'sFDI')! });
            return reply(201, undefined, { Location: `/edev/${edevId(lfdi)}` });
          }
          if (req.method === 'PUT' && url.pathname === `/edev/${edevId(lfdi)}/cp`) {
            state.endDevices.get(lfdi)!.nmi = textOf(el, 'connectionPointId', CSIPAUS_NS);
            return reply(204);
          }
          const report = url.pathname.match(/^\/edev\/(\d+)\/der\/1\/(dercap|derg|ders|dera)$/);
          if (req.method === 'PUT' && report && Number(report[1]) === edevId(lfdi)) {
            state.reports.set(el.name, { el, count: (state.reports.get(el.name)?.count ?? 0) + 1 });
            return reply(204);
          }
          if (req.method === 'POST' && url.pathname === '/mup') {
            // IEEE 2030.5 §10.10: a MirrorUsagePoint of an mRID the server holds is that one, not a new one
            if (el.name !== 'MirrorUsagePoint' || textOf(el, 'deviceLFDI') !== lfdi) return reply(400);
            const mRID = textOf(el, 'mRID')!;
            let href = [...state.mirrors].find(([, m]) => m.mRID === mRID)?.[0];
            if (!href) {
              href = `/mup/${++mupCount}`;
              state.mirrors.set(href, {
                lfdi,
                mRID,
                roleFlags: textOf(el, 'roleFlags')!,
                readingTypes: new Map(),
                readings: [],
                posts: 0,
              });
            }
            const m = state.mirrors.get(href)!;
            for (const r of el.children.filter((c) => c.name === 'MirrorMeterReading'))
              m.readingTypes.set(textOf(r, 'mRID')!, child(r, 'ReadingType')!);
            return reply(201, undefined, { Location: href });
          }
          const mirror = req.method === 'POST' ? state.mirrors.get(url.pathname) : undefined;
          // a point it does not hold (never made, or forgotten): not found, as HTTP says of any resource
          if (req.method === 'POST' && !mirror && /^\/mup\/\d+$/.test(url.pathname)) return reply(404);
          if (mirror) {
            if (mirror.lfdi !== lfdi) return reply(403);
            const readings =
              el.name === 'MirrorMeterReading' ? [el] : el.children.filter((c) => c.name === 'MirrorMeterReading');
            // a reading the point was not told of cannot be read by anyone
            if (readings.some((r) => !mirror.readingTypes.has(textOf(r, 'mRID')!))) return reply(400);
            for (const r of readings) {
              const reading = child(r, 'Reading')!;
              const period = child(reading, 'timePeriod')!;
              mirror.readings.push({
                mRID: textOf(r, 'mRID')!,
                value: Number(textOf(reading, 'value')),
                start: Number(textOf(period, 'start')),
                duration: Number(textOf(period, 'duration')),
              });
            }
            mirror.posts++;
            return reply(201);
          }
          if (req.method === 'POST' && url.pathname === '/rsp') {
            state.responses.push({
              href: url.pathname,
              lfdi: textOf(el, 'endDeviceLFDI')!,
              subject: textOf(el, 'subject')!,
              status: Number(textOf(el, 'status')),
            });
            return reply(201, undefined, { Location: `/rsp/${state.responses.length}` });
          }
          return reply(405);
        })().catch(() => {
          res.writeHead(500);
          res.end();
        });
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sockets = new Set<import('node:net').Socket>();
  server.on('secureConnection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return Object.assign(state, {
    url: `https://localhost:${port}/dcap`,
    down: close,
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close,
  });
}
