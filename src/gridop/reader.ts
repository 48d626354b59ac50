/**
 * Reads the server's resources, each at its pollRate: a resource read less than its rate ago is
 * answered from the last copy. A list's pollRate holds for its items and what lies below them (the
 * "function set" rule of IEEE 2030.5's pollRate); a resource without one below a list without one
 * takes site.yaml's pollSeconds. Lists are read page by page as the server pages them (`s` the
 * first item, `l` how many, IEEE 2030.5 §5.5 query strings). Every body is validated against the
 * schemas; one that fails is still read when it is well-formed and holds what the client needs
 * (published servers send such bodies, test/fixtures/gridop/README.md), and its errors are logged.
 */
import type { Logger } from 'pino';
import { GridOpError } from './errors.js';
import type { SepHttp } from './http.js';
import type { ListPage } from './resources.js';
import type { Validation } from './validate.js';
import { parseXml, type XmlElement } from './xml.js';

export const PAGE_SIZE = 50;
/** more pages than this in one list is taken as a server that never stops paging */
const MAX_PAGES = 40;
const MAX_POLL_SECONDS = 86_400;

interface Entry {
  el: XmlElement;
  /** mono ms when it is to be read again */
  due: number;
}

export interface ReaderOptions {
  validate: (body: string) => Promise<Validation>;
  log: Logger;
  /** site.yaml's pollSeconds: the rate of resources the server gives none */
  pollSeconds: number;
  /** a server's pollRate below this is raised to it */
  minPollSeconds: number;
  mono: () => number;
}

export class ResourceReader {
  private readonly cache = new Map<string, Entry>();
  /** bodies that did not validate since start */
  invalidBodies = 0;

  constructor(
    private readonly http: SepHttp,
    private readonly opts: ReaderOptions,
  ) {}

  /** The rate a resource is read at: its own pollRate, else the one it inherits, clamped. */
  rate(own: string | undefined, inherited: number | undefined): number {
    const r = own !== undefined && /^\d+$/.test(own) ? Number(own) : (inherited ?? this.opts.pollSeconds);
    return Math.min(MAX_POLL_SECONDS, Math.max(this.opts.minPollSeconds, r));
  }

  /** GET an href (cached until its rate has passed); `inherited` is the rate of the list above it. */
  async get(href: string, inherited?: number): Promise<{ el: XmlElement; rate: number; fresh: boolean }> {
    const now = this.opts.mono();
    const hit = this.cache.get(href);
    if (hit && hit.due > now) return { el: hit.el, rate: this.rate(hit.el.attrs.pollRate, inherited), fresh: false };
    const el = await this.fetch(href);
    const rate = this.rate(el.attrs.pollRate, inherited);
    this.cache.set(href, { el, due: now + rate * 1000 });
    return { el, rate, fresh: true };
  }

  /** Every item of a list, page by page; the list's rate holds for its items. */
  async list<T>(
    href: string,
    read: (el: XmlElement) => ListPage<T>,
    inherited?: number,
  ): Promise<{ items: T[]; rate: number }> {
    const items: T[] = [];
    let rate = inherited ?? this.opts.pollSeconds;
    for (let page = 0; page < MAX_PAGES; page++) {
      const url = this.http.url(href);
      url.searchParams.set('s', String(items.length));
      url.searchParams.set('l', String(PAGE_SIZE));
      const got = await this.get(`${url.pathname}${url.search}`, inherited);
      const p = read(got.el);
      if (page === 0) rate = got.rate;
      items.push(...p.items);
      if (p.items.length === 0 || items.length >= p.all) return { items, rate };
    }
    throw new GridOpError('GRIDOP_INVALID_XML', `${href}: more than ${MAX_PAGES} pages`);
  }

  /** mono ms of the earliest resource due to be read again (undefined: none read yet). */
  nextDue(): number | undefined {
    let min: number | undefined;
    for (const e of this.cache.values()) if (min === undefined || e.due < min) min = e.due;
    return min;
  }

  /** Forgets everything read, so the next walk starts again from discovery. */
  forgetAll(): void {
    this.cache.clear();
  }

  /** Forgets a resource and its pages, so the next read asks the server (after a POST changed it). */
  forget(href: string): void {
    const path = this.http.url(href).pathname;
    for (const key of this.cache.keys()) if (key === href || key.split('?')[0] === path) this.cache.delete(key);
  }

  private async fetch(href: string): Promise<XmlElement> {
    const res = await this.http.request('GET', href);
    if (res.status !== 200) {
      throw new GridOpError('GRIDOP_HTTP_STATUS', `GET ${href}: HTTP ${res.status}, expected 200`);
    }
    return this.parse(`GET ${href}`, res.body);
  }

  /** Validates and parses a body the server sent. */
  async parse(what: string, body: string): Promise<XmlElement> {
    const v = await this.opts.validate(body);
    if (!v.ok) this.invalidBodies++;
    let el: XmlElement;
    try {
      el = parseXml(body);
    } catch (e) {
      throw new GridOpError('GRIDOP_INVALID_XML', `${what}: ${(e as Error).message}`);
    }
    if (!v.ok) {
      this.opts.log.warn(
        { what, errors: v.errors },
        'grid operator: body does not validate against the schemas; read anyway',
      );
    }
    return el;
  }
}
