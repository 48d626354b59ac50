/**
 * The CSIP-AUS client (docs/grid-operator.md): discovers the server from its DeviceCapability,
 * reads its Time, finds or registers this device's EndDevice (LFDI/SFDI from the certificate) and
 * puts the site's NMI on its csipaus ConnectionPoint, follows FunctionSetAssignments → DERPrograms →
 * DERControls and DefaultDERControls, and posts the Responses the controls ask for. What is in force
 * is worked out by schedule.ts at every control's start and end and after every read; each change
 * is handed to the listeners of onLimits (the site-limits loop subscribes, docs/grid-operator.md
 * "The hand-off").
 *
 * When the server cannot be reached the controls already read stay, so they run to their
 * scheduled end and the DefaultDERControl follows, as CSIP-AUS requires; the client keeps trying.
 * Open-dynamic-export's client (src/setpoints/csipAus/index.ts) was read for the order of
 * discovery and registration and the in-band ConnectionPoint PUT.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GridOperatorConfig } from '../config/types.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { Feature, FeatureHealth } from '../core/feature.js';
import { GridOpError } from './errors.js';
import { SepHttp } from './http.js';
import { type DeviceIdentity, identityOfPem } from './identity.js';
import { type GridOperatorLimits, limitsOf, sameLimits } from './limits.js';
import { registerGridOpMetrics } from './metrics.js';
import { type MirrorPoint, MirrorPoster, type MirrorTransport, type MirrorValues, SAMPLE_SECONDS } from './mirror.js';
import { ResourceReader } from './reader.js';
import { type DerReport, derAvailabilityBody, derCapabilityBody, derSettingsBody, derStatusBody } from './report.js';
import {
  connectionPointBody,
  type EndDevice,
  endDeviceBody,
  readDefaultDerControl,
  readDerControlList,
  readDerList,
  readDerProgramList,
  readDeviceCapability,
  readEndDevice,
  readEndDeviceList,
  readFsaList,
  readTime,
  responseBody,
} from './resources.js';
import { loadSaved, saveState } from './saved.js';
import {
  drawRandomization,
  inForce,
  type Phase,
  type ProgramControls,
  type Randomization,
  type ResponseDue,
  responsesDue,
} from './schedule.js';
import { clockOffsetProblem, readingsDroppedProblem } from './status-body.js';
import { type Validation, validateXml } from './validate.js';
import { CSIPAUS_NS, textOf } from './xml.js';

export interface GridOperatorStatus {
  /** the last read of the server succeeded */
  reachable: boolean;
  lastError: string | null;
  /** wall ms of the last successful read of the whole tree */
  lastContact: number | null;
  /** server clock minus ours, seconds, from its Time resource */
  clockOffsetSeconds: number | null;
  endDevice: string | null;
  lfdi: string;
  sfdi: string;
  limits: GridOperatorLimits | null;
  /** bodies the server sent that did not validate against the schemas */
  invalidBodies: number;
  /** responses waiting to be posted again */
  responsesPending: number;
  /** MirrorUsagePoint readings waiting for the server: intervals, the larger of the two points' (mirror.ts) */
  readingsUnsent: number;
  /** readings lists (one per point and interval) dropped since the start: the server was gone for more than 12 intervals */
  readingsDropped: number;
}

export interface GridOperatorClientOptions {
  config: GridOperatorConfig;
  clock: Clock;
  log: Logger;
  /** [0, 1): draws the randomisation of controls (tests give a seeded one) */
  random?: () => number;
  /** the shortest time between reads of a resource, whatever the server's pollRate; 5 s unless a test says less */
  minPollSeconds?: number;
  validate?: (body: string) => Promise<Validation>;
  /** the site's DER as the server is to be told of it (report.ts); absent: nothing is reported */
  report?: () => DerReport | undefined;
  /** the site's and the DER's readings now, sampled for the MirrorUsagePoints (mirror.ts); absent: none are posted */
  mirror?: () => Partial<Record<MirrorPoint, MirrorValues>>;
  /** how often the readings are sampled, s; SAMPLE_SECONDS unless a test says less */
  sampleSeconds?: number;
  /** where the programs and controls last read are kept across restarts (saved.ts); absent: memory only */
  stateFile?: string;
  /** where sitegw_gridop_reachable and sitegw_gridop_control_until_seconds go (metrics.ts); absent: none */
  registry?: Registry;
}

/** how often status and availability are put when the EndDevice names no postRate */
const DEFAULT_POST_SECONDS = 300;

/** a read that failed is tried again after this long, or pollSeconds when shorter */
const RETRY_SECONDS = 30;
const MAX_PENDING_RESPONSES = 200;

export class GridOperatorClient implements Feature {
  readonly name = 'gridop';
  readonly identity: DeviceIdentity;
  private readonly http: SepHttp;
  private readonly reader: ResourceReader;
  private readonly listeners = new Set<(limits: GridOperatorLimits) => void>();
  private programs: ProgramControls[] = [];
  private readonly randomization = new Map<string, Randomization>();
  private phases = new Map<string, Phase>();
  private pending: { href: string; body: string }[] = [];
  private endDevice: (EndDevice & { href: string }) | null = null;
  private connectionPointDone = false;
  private offsetSeconds: number | null = null;
  private limits: GridOperatorLimits | undefined;
  private lastError: string | null = null;
  private lastContact: number | null = null;
  private reachable = false;
  private timer: ClockTimer | null = null;
  private running = false;
  private busy: Promise<void> = Promise.resolve();
  private readonly random: () => number;
  private readonly minPoll: number;
  /** the DERCapability last put, so it is put again only when it changes */
  private capabilityPut: string | null = null;
  /** mono ms when status and availability are to be put again */
  private statusDue = 0;
  /** what the state file holds (snapshot()), so it is written only on a change */
  private saved: string | null = null;
  private unregisterMetrics: (() => void) | null = null;
  private readonly mirrors: MirrorPoster | undefined;
  private sampler: ClockTimer | null = null;

  constructor(private readonly opts: GridOperatorClientOptions) {
    const { config } = opts;
    const cert = readFileSync(config.certificate);
    this.identity = identityOfPem(cert);
    this.http = new SepHttp({
      base: config.discoveryUrl,
      cert,
      key: readFileSync(config.key),
      ...(config.ca ? { ca: readFileSync(config.ca) } : {}),
    });
    this.random = opts.random ?? Math.random;
    this.minPoll = opts.minPollSeconds ?? 5;
    this.reader = new ResourceReader(this.http, {
      validate: opts.validate ?? ((b) => validateXml(b)),
      log: opts.log,
      pollSeconds: config.pollSeconds,
      minPollSeconds: this.minPoll,
      mono: () => opts.clock.mono(),
    });
    if (opts.mirror)
      this.mirrors = new MirrorPoster({
        lfdi: this.identity.lfdi,
        pen: config.pen,
        minPollSeconds: this.minPoll,
        serverNow: () => this.serverNow(),
        mono: () => opts.clock.mono(),
        onDropped: (now, total) =>
          opts.log.warn(
            { dropped: now, droppedTotal: total },
            'grid operator: the server is gone for longer than the mirrored readings wait for; the oldest dropped',
          ),
      });
  }

  /** Calls `listener` with every change of the limits in force; returns the unsubscribe. */
  onLimits(listener: (limits: GridOperatorLimits) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The limits in force now, undefined before the first evaluation. */
  current(): GridOperatorLimits | undefined {
    return this.limits;
  }

  start(): void {
    this.running = true;
    if (this.opts.registry) this.unregisterMetrics = registerGridOpMetrics(this.opts.registry, () => this.status());
    this.restore();
    this.schedule(0);
    this.sample();
  }

  /** The readings sampled for the MirrorUsagePoints, every SAMPLE_SECONDS while running. */
  private sample(): void {
    if (!this.running || !this.mirrors || !this.opts.mirror) return;
    try {
      this.mirrors.sample(this.opts.mirror());
    } catch (e) {
      this.opts.log.error({ err: e }, 'grid operator: sampling the readings failed');
    }
    this.sampler = this.opts.clock.setTimeout(() => this.sample(), (this.opts.sampleSeconds ?? SAMPLE_SECONDS) * 1000);
  }

  /** Takes up the controls saved before a restart, so they hold before the server answers. */
  private restore(): void {
    const file = this.opts.stateFile;
    if (!file) return;
    const loaded = loadSaved(file, { discoveryUrl: this.opts.config.discoveryUrl, lfdi: this.identity.lfdi });
    if (!loaded.ok) {
      if (loaded.reason !== 'no saved state')
        this.opts.log.warn({ file, reason: loaded.reason }, 'grid operator: saved state not used');
      return;
    }
    const s = loaded.state;
    this.programs = s.programs;
    for (const [id, r] of s.randomization) this.randomization.set(id, r);
    this.phases = new Map(s.phases);
    this.offsetSeconds = s.offsetSeconds;
    this.saved = this.snapshot();
    this.opts.log.info(
      { savedAt: new Date(s.savedAt).toISOString() },
      'grid operator: the controls last read hold until the server answers',
    );
    this.evaluate();
  }

  private snapshot(): string {
    return JSON.stringify([this.programs, [...this.randomization], [...this.phases], this.offsetSeconds]);
  }

  /** Writes what was read when it changed; a failed write is logged, the client goes on. */
  private persist(): void {
    const file = this.opts.stateFile;
    if (!file) return;
    const now = this.snapshot();
    if (now === this.saved) return;
    try {
      saveState(file, {
        version: 1,
        savedAt: this.opts.clock.now(),
        discoveryUrl: this.opts.config.discoveryUrl,
        lfdi: this.identity.lfdi,
        offsetSeconds: this.offsetSeconds,
        programs: this.programs,
        randomization: [...this.randomization],
        phases: [...this.phases],
      });
      this.saved = now;
    } catch (e) {
      this.opts.log.warn({ file, err: (e as Error).message }, 'grid operator: state not saved');
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.sampler) this.opts.clock.clearTimeout(this.sampler);
    this.sampler = null;
    // closing first ends a request in flight at once instead of after its timeout
    this.http.close();
    await this.busy;
    this.unregisterMetrics?.();
    this.unregisterMetrics = null;
  }

  status(): GridOperatorStatus {
    return {
      reachable: this.reachable,
      lastError: this.lastError,
      lastContact: this.lastContact,
      clockOffsetSeconds: this.offsetSeconds,
      endDevice: this.endDevice?.href ?? null,
      lfdi: this.identity.lfdi,
      sfdi: this.identity.sfdi,
      limits: this.limits ?? null,
      invalidBodies: this.reader.invalidBodies,
      responsesPending: this.pending.length,
      readingsUnsent: this.mirrors?.unsentCount ?? 0,
      readingsDropped: this.mirrors?.dropped ?? 0,
    };
  }

  health(): FeatureHealth {
    const problems: string[] = [];
    if (!this.reachable && this.lastError !== null) {
      // what holds meanwhile: the control to its end, then the default (docs/grid-operator.md)
      const l = this.limits;
      const holds =
        l?.kind === 'control' && l.until !== null
          ? `: its control holds until ${new Date(l.until).toISOString()}, then its default`
          : l?.kind === 'default'
            ? ': its default control holds'
            : '';
      problems.push(`the grid operator's server cannot be reached${holds}`);
    }
    const clock = clockOffsetProblem(this.offsetSeconds);
    if (clock) problems.push(clock);
    const dropped = readingsDroppedProblem(this.mirrors?.droppedInOutage ?? 0);
    if (dropped) problems.push(dropped);
    return {
      problems,
      connection: { connected: this.reachable, outboxDepth: this.pending.length, lastError: this.lastError },
    };
  }

  /** Seconds since the epoch on the server's clock. */
  private serverNow(): number {
    return this.opts.clock.now() / 1000 + (this.offsetSeconds ?? 0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = this.opts.clock.setTimeout(
      () => {
        this.timer = null;
        this.busy = this.tick();
      },
      Math.max(0, ms),
    );
  }

  private async tick(): Promise<void> {
    let retryMs: number | undefined;
    // the readings' interval ends on time even when the walk below fails before it posts them
    this.mirrors?.collect();
    try {
      await this.refresh();
      this.reachable = true;
      this.lastError = null;
      this.lastContact = this.opts.clock.now();
    } catch (e) {
      this.reachable = false;
      this.lastError = e instanceof GridOpError ? `${e.code}: ${e.message}` : String(e);
      this.opts.log.warn(
        { err: this.lastError },
        'grid operator: read failed; the controls already read stay in force',
      );
      retryMs = Math.min(RETRY_SECONDS, this.opts.config.pollSeconds) * 1000;
      // the next try starts again from discovery: the server may have moved or forgotten this
      // device (a restored server answers 404 for the old EndDevice), so registration, the NMI and
      // the reports are made again; the programs already read stay until a walk succeeds
      this.reader.forgetAll();
      this.connectionPointDone = false;
      this.capabilityPut = null;
      this.statusDue = 0;
    }
    try {
      this.evaluate();
      this.persist();
      await this.postPending();
    } catch (e) {
      // a fault here is sitegw's; the loop must go on, so the next control still starts and ends
      this.opts.log.error({ err: e }, 'grid operator: evaluation failed');
    }
    if (!this.running) return;
    const due = this.reader.nextDue();
    // after a failure the overdue resources wait for the retry, not for their due time
    const read = retryMs ?? (due === undefined ? undefined : due - this.opts.clock.mono());
    const report = this.opts.report && this.statusDue > 0 ? this.statusDue - this.opts.clock.mono() : undefined;
    const waits = [read, this.untilNextChange(), report, this.mirrors?.untilDue()].filter(
      (w): w is number => w !== undefined,
    );
    this.schedule(Math.max(100, Math.min(...waits, this.opts.config.pollSeconds * 1000)));
  }

  private untilNextChange(): number | undefined {
    const until = this.limits?.until;
    return until === null || until === undefined ? undefined : until - this.serverNow() * 1000 + 1;
  }

  /** Reads what is due: discovery, time, registration, the programs and their controls. */
  private async refresh(): Promise<void> {
    const dcapUrl = this.http.base.pathname + this.http.base.search;
    const dcap = await this.reader.get(dcapUrl);
    const cap = readDeviceCapability(dcap.el);
    if (cap.timeLink) {
      const sent = this.opts.clock.now();
      const t = await this.reader.get(cap.timeLink.href, dcap.rate);
      // a copy from the cache is as old as its read: only a fresh one tells the offset
      if (t.fresh) {
        // the server's reading is taken to be from half-way through the request
        const local = (sent + this.opts.clock.now()) / 2000;
        this.offsetSeconds = readTime(t.el).currentTime - Math.floor(local);
      }
    }
    if (!cap.endDeviceListLink)
      throw new GridOpError('GRIDOP_MISSING_LINK', 'the DeviceCapability has no EndDeviceListLink');
    const edev = await this.registered(cap.endDeviceListLink.href, dcap.rate);
    if (edev.enabled === false)
      throw new GridOpError('GRIDOP_NOT_REGISTERED', `the server disabled EndDevice ${edev.href}`);
    if (edev.connectionPointLink && !this.connectionPointDone)
      await this.putConnectionPoint(edev.connectionPointLink.href);
    if (this.opts.report && edev.derListLink) await this.reportDer(edev.derListLink.href, edev.postRate, dcap.rate);
    if (this.mirrors && cap.mirrorUsagePointListLink)
      await this.mirrors.post(cap.mirrorUsagePointListLink.href, this.mirrorTransport, edev.postRate);
    if (!edev.fsaListLink)
      throw new GridOpError('GRIDOP_MISSING_LINK', `EndDevice ${edev.href} has no FunctionSetAssignmentsListLink`);

    const fsas = await this.reader.list(edev.fsaListLink.href, readFsaList, dcap.rate);
    const programs: ProgramControls[] = [];
    const seen = new Set<string>();
    for (const fsa of fsas.items) {
      if (!fsa.derProgramListLink) continue;
      const derps = await this.reader.list(fsa.derProgramListLink.href, readDerProgramList, fsas.rate);
      for (const p of derps.items) {
        // the same program may be assigned through two FSAs
        if (seen.has(p.mRID)) continue;
        seen.add(p.mRID);
        const controls = p.derControlListLink
          ? (await this.reader.list(p.derControlListLink.href, readDerControlList, derps.rate)).items
          : [];
        const entry: ProgramControls = { mRID: p.mRID, primacy: p.primacy, controls };
        if (p.defaultDerControlLink) {
          entry.defaultControl = readDefaultDerControl(
            (await this.reader.get(p.defaultDerControlLink.href, derps.rate)).el,
          );
        }
        programs.push(entry);
      }
    }
    this.programs = programs;
    // what the server no longer lists is forgotten, so the maps and the state file stay the size of its lists
    const listed = new Set(programs.flatMap((p) => p.controls.map((c) => c.mRID)));
    for (const id of [...this.randomization.keys()]) if (!listed.has(id)) this.randomization.delete(id);
    for (const id of [...this.phases.keys()]) if (!listed.has(id)) this.phases.delete(id);
  }

  /** This device's EndDevice: found in the list by LFDI or SFDI, or registered by POST. */
  private async registered(listHref: string, rate: number): Promise<EndDevice & { href: string }> {
    const mine = (d: EndDevice) =>
      d.href !== undefined &&
      (d.lfdi === this.identity.lfdi || (/^\d+$/.test(d.sfdi) && BigInt(d.sfdi) === BigInt(this.identity.sfdi)));
    let found = (await this.reader.list(listHref, readEndDeviceList, rate)).items.find(mine);
    if (!found) {
      const body = endDeviceBody(this.identity, Math.floor(this.serverNow()));
      const res = await this.send('POST', listHref, body);
      const location = res.headers.location;
      if (res.status !== 201 || !location) {
        throw new GridOpError(
          'GRIDOP_NOT_REGISTERED',
          `POST ${listHref}: HTTP ${res.status}, expected 201 with a Location`,
        );
      }
      this.opts.log.info({ href: location, lfdi: this.identity.lfdi }, 'grid operator: EndDevice registered');
      this.reader.forget(listHref);
      found = { ...readEndDevice((await this.reader.get(location, rate)).el), href: location };
    }
    this.endDevice = found as EndDevice & { href: string };
    return this.endDevice;
  }

  /**
   * Tells the server of the site's DER: capability and settings when they change, status and
   * availability every postRate. CSIP-AUS has one DER per EndDevice: the first of the list.
   */
  private async reportDer(href: string, postRate: number | undefined, rate: number): Promise<void> {
    const r = this.opts.report?.();
    if (!r) return;
    const der = (await this.reader.list(href, readDerList, rate)).items[0];
    if (!der) return;
    const at = Math.floor(this.serverNow());
    const capability = derCapabilityBody(r);
    if (capability !== this.capabilityPut) {
      if (der.capabilityLink) await this.put(der.capabilityLink.href, capability);
      if (der.settingsLink) await this.put(der.settingsLink.href, derSettingsBody(r, at));
      this.capabilityPut = capability;
    }
    const mono = this.opts.clock.mono();
    if (mono < this.statusDue) return;
    if (der.statusLink) await this.put(der.statusLink.href, derStatusBody(r, at));
    if (der.availabilityLink) await this.put(der.availabilityLink.href, derAvailabilityBody(r, at));
    this.statusDue = mono + Math.max(this.minPoll, postRate ?? DEFAULT_POST_SECONDS) * 1000;
  }

  private async put(href: string, body: string): Promise<void> {
    const res = await this.send('PUT', href, body);
    if (res.status < 200 || res.status > 299) {
      throw new GridOpError('GRIDOP_HTTP_STATUS', `PUT ${href}: HTTP ${res.status}, expected 2xx`);
    }
  }

  /** Puts the NMI on the EndDevice's csipaus ConnectionPoint when it says otherwise. */
  private async putConnectionPoint(href: string): Promise<void> {
    const res = await this.http.request('GET', href);
    if (res.status === 200) {
      const cp = await this.reader.parse(`GET ${href}`, res.body);
      if (textOf(cp, 'connectionPointId', CSIPAUS_NS) === this.opts.config.nmi) {
        this.connectionPointDone = true;
        return;
      }
    }
    await this.put(href, connectionPointBody(this.opts.config.nmi));
    this.connectionPointDone = true;
    this.opts.log.info({ nmi: this.opts.config.nmi }, 'grid operator: ConnectionPoint set');
  }

  /** Works out what is in force now, queues the responses due and tells the listeners of a change. */
  private evaluate(): void {
    for (const p of this.programs) {
      for (const c of p.controls) {
        if (!this.randomization.has(c.mRID)) this.randomization.set(c.mRID, drawRandomization(c, this.random));
      }
    }
    const now = this.serverNow();
    const state = inForce(this.programs, this.randomization, now);
    const { due, phases } = responsesDue(this.programs, this.randomization, state, this.phases, now);
    this.phases = phases;
    for (const d of due) this.queueResponse(d, now);
    const limits = limitsOf(state);
    if (sameLimits(this.limits, limits)) return;
    this.limits = limits;
    this.opts.log.info({ limits }, 'grid operator: limits in force changed');
    for (const l of this.listeners) {
      try {
        l(limits);
      } catch (e) {
        this.opts.log.error({ err: e }, 'grid operator: a limits listener failed');
      }
    }
  }

  private queueResponse(d: ResponseDue, now: number): void {
    if (!d.control.replyTo) return;
    this.pending.push({
      href: d.control.replyTo,
      body: responseBody({ lfdi: this.identity.lfdi, mRID: d.control.mRID, status: d.status, at: Math.floor(now) }),
    });
    if (this.pending.length > MAX_PENDING_RESPONSES)
      this.pending.splice(0, this.pending.length - MAX_PENDING_RESPONSES);
  }

  /** Posts the queued responses in order; what fails stays queued for the next tick. */
  private async postPending(): Promise<void> {
    while (this.pending.length > 0) {
      const r = this.pending[0]!;
      try {
        const res = await this.send('POST', r.href, r.body);
        if (res.status >= 500) return;
        if (res.status < 200 || res.status > 299) {
          this.opts.log.warn({ href: r.href, status: res.status }, 'grid operator: response refused; dropped');
        }
      } catch (e) {
        this.opts.log.warn({ err: (e as Error).message }, 'grid operator: response not posted; kept for later');
        return;
      }
      this.pending.shift();
    }
  }

  private readonly mirrorTransport: MirrorTransport = {
    send: (method, href, body) => this.send(method, href, body),
    postRateOf: async (href) => {
      const res = await this.http.request('GET', href);
      if (res.status !== 200) return undefined;
      const rate = textOf(await this.reader.parse(`GET ${href}`, res.body), 'postRate');
      return rate === undefined || !/^\d+$/.test(rate) ? undefined : Number(rate);
    },
  };

  /** Sends a body the client wrote, validated first: one that fails is a fault in sitegw, not sent. */
  private async send(method: 'POST' | 'PUT', href: string, body: string) {
    const v = await (this.opts.validate ?? validateXml)(body);
    if (!v.ok)
      throw new GridOpError('GRIDOP_INVALID_XML', `sitegw wrote an invalid ${method} body: ${v.errors.join('; ')}`);
    return this.http.request(method, href, body);
  }
}
