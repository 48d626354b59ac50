/**
 * examples/grafana: every metric the dashboard queries is exported by a running gateway, with
 * every label it filters, groups or names a legend by, and every label value it selects on.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';
import { type PromFamily, parsePromText } from '../support/prom-text.js';

const dashboard = JSON.parse(
  readFileSync(new URL('../../examples/grafana/sitegw-dashboard.json', import.meta.url), 'utf8'),
);
/** labels Prometheus itself puts on every scraped series (scrape config `job`, target `instance`) */
const TARGET_LABELS = ['instance', 'job'];

interface Query {
  panel: string;
  expr: string;
  legend: string;
}

function queries(): Query[] {
  const out: Query[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) out.push({ panel: p.title, expr: t.expr, legend: t.legendFormat ?? '' });
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating?.list ?? [])
    if (v.type === 'query')
      out.push({
        panel: `variable ${v.name}`,
        expr: v.query.replace(/^label_values\((\w+),\s*(\w+)\)$/, '$1{$2=~".*"}'),
        legend: '',
      });
  return out;
}

describe('examples/grafana dashboard', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let families: Map<string, PromFamily>;
  beforeAll(async () => {
    demo = await demoSite({ speed: 300, history: 'PT1H' });
    // a few failed polls, so the error counters the health panels read have series
    demo.servers.faults.set('meter', 2, { kind: 'exception', code: 4 }, 3);
    await waitFor(
      'an error counted',
      () => demo.daemon.site.devices.get('house-meter')!.errors.exception > 0 || undefined,
    );
    const token = await partnerToken(demo.credentials);
    // a stream older than three poll periods is not shown: the failed polls can leave the house
    // meter without one, and at speed 300 a loaded machine's pause can leave any device without
    // one, so take a scrape where every role the dashboard asks for has its power
    const text = await waitFor('a scrape with the power of every role, the house meter read again', async () => {
      const res = await fetch(`${demo.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      const body = await res.text();
      const has = (role: string) => new RegExp(`^sitegw_power_watts\\{[^}]*role="${role}"`, 'm').test(body);
      return ['pv', 'battery', 'grid', 'house'].every(has) && body;
    });
    families = parsePromText(text);
  });
  afterAll(async () => demo?.cleanup());

  it('queries only exported metrics, labels and label values', () => {
    const qs = queries();
    expect(qs.length).toBeGreaterThanOrEqual(10);
    const seen = new Set<string>();
    for (const q of qs) {
      const where = `${q.panel}: ${q.expr}`;
      const names = [...q.expr.matchAll(/\b(sitegw_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
      expect(names.length, where).toBeGreaterThan(0);
      const samplesOf = (name: string) => {
        const f = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
        expect(f, `${where}: ${name} is not exported`).toBeDefined();
        const s = f!.samples.filter((x) => x.name === name);
        expect(s.length, `${where}: ${name} has no series`).toBeGreaterThan(0);
        return s;
      };
      const labelsIn = new Set<string>(TARGET_LABELS);
      for (const name of names) {
        seen.add(name);
        for (const s of samplesOf(name)) Object.keys(s.labels).forEach((k) => labelsIn.add(k));
      }
      for (const m of q.expr.matchAll(/\b(sitegw_[a-z0-9_]+)\{([^}]*)\}/g)) {
        const samples = samplesOf(m[1]!);
        for (const [, label, op, value] of m[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
          if (TARGET_LABELS.includes(label!)) continue;
          expect(
            samples.some((s) => label! in s.labels),
            `${where}: ${m[1]} has no label ${label}`,
          ).toBe(true);
          const values = samples.map((s) => s.labels[label!]);
          if (op === '=') expect(values, `${where}: no ${m[1]} series with ${label}="${value}"`).toContain(value);
          if (op === '=~')
            expect(
              values.some((v) => new RegExp(`^(?:${value})$`).test(v!)),
              `${where}: no ${m[1]} series with ${label}=~"${value}"`,
            ).toBe(true);
        }
      }
      for (const m of q.expr.matchAll(/\bby\s*\(([^)]*)\)/g)) {
        for (const label of m[1]!.split(',').map((x) => x.trim()))
          expect([...labelsIn], `${where}: by (${label})`).toContain(label);
      }
      for (const m of q.legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g))
        expect([...labelsIn], `${q.panel}: legend {{${m[1]}}}`).toContain(m[1]);
    }
    // the panels the issue asks for: power flow, SoC, grid events, device health by error kind
    for (const name of [
      'sitegw_power_watts',
      'sitegw_energy_joules_total',
      'sitegw_battery_soc_ratio',
      'sitegw_grid_state',
      'sitegw_device_online',
      'sitegw_device_errors_total',
    ])
      expect(seen).toContain(name);
  });
});
