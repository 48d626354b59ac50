/**
 * Readings without the counters' register scales (core/channels.ts CounterScale): the tests
 * that prove values against vendor documents compare the values; the scales have their own
 * tests (test/profiles/counter-scale.test.ts).
 */
export function withoutScales<T>(x: T): T {
  if (Array.isArray(x)) return x.map(withoutScales) as T;
  if (typeof x !== 'object' || x === null) return x;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) if (k !== 'inScale' && k !== 'outScale') out[k] = withoutScales(v);
  return out as T;
}
