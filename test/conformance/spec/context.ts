/**
 * The demo every section of the spec's conformance test reads (test/conformance/spec.test.ts
 * starts it once), and the helpers they share. The bindings are live: each section reads them
 * inside its tests, after the file's beforeAll has set them.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TopoNode } from '../../../src/site/topology.js';
import { partnerToken } from '../../support/auth.js';
import { demoSite, getJson } from '../../support/demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
export const Q = 15 * 60_000;
export const DAY = 86_400_000;
export const TZ = 'Europe/Berlin';

/** A test (or describe block) whose title starts with `title` exists in `file`: the rule is asserted there. */
export function coveredBy(file: string, title: string): void {
  const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const opening = new RegExp(`\\b(?:it|describe)\\(\\s*(['"\`])${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  expect(opening.test(source), `${file} has a test titled "${title}…"`).toBe(true);
}

export let demo: Demo;
export let token: string;
export let siteId: string;
export const api = (path: string, tok = token) => getJson(`${demo.url}${path}`, tok);
export const tel = (id: string, q: string, tok = token) =>
  api(`/api/v1/devices/${encodeURIComponent(id)}/telemetry?${q}`, tok);
export const topology = async (q = ''): Promise<TopoNode> =>
  (await api(`/api/v1/sites/${siteId}/topology${q}`)).body.topology;
export const streamEnding = (suffix: string) => demo.daemon.site.streams().find((s) => s.id.endsWith(suffix))!.id;
export const wsUrl = (q: string) => `${demo.url.replace(/^http/, 'ws')}/ws?${q}`;

export async function startDemo(): Promise<void> {
  // 02:00 local on 24 Nov 2026, history back to 19 Nov 22:00Z: the spec examples' days are
  // closed, and the accelerated clock pushes a bucket every 15 s of real time
  demo = await demoSite({ speed: 60, start: Date.parse('2026-11-24T01:00:00Z'), history: 'P4DT3H' });
  siteId = demo.daemon.site.id;
  token = await partnerToken(demo.credentials);
}

export const stopDemo = async () => demo?.cleanup();
