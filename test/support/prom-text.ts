/**
 * A strict parser of the Prometheus text exposition format 0.0.4
 * (prometheus.io/docs/instrumenting/exposition_formats, "Text-based format"), for tests that
 * read /metrics as Prometheus would. Strict on purpose: anything the format does not allow
 * throws with the line number, so a test fails on output a real scraper could misread.
 *
 *   # HELP <name> <docstring>        (\\ and \n escapes)
 *   # TYPE <name> counter|gauge|histogram|summary|untyped   (once, before the family's samples)
 *   <name>[{<label>="<value>",...}] <value> [<timestamp ms>]
 *
 * Histogram and summary samples are `<name>_bucket|_sum|_count` (`le`/`quantile` label);
 * label values escape \\, \" and \n; a series (name + label set) appears once.
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

export interface PromFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * A value as Go's strconv.ParseFloat reads it (what the format prescribes): NaN and Inf/Infinity
 * in any case (prom-client writes 'Nan'), a sign only before Inf; decimal forms otherwise.
 */
function parseValue(s: string, line: number): number {
  const inf = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) throw new Error(`line ${line}: '${s}' is not a sample value`);
  return Number(s);
}

/** The family a sample name belongs to, given the TYPE lines seen so far. */
function familyOf(name: string, families: Map<string, PromFamily>): PromFamily | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1; // after '{'
  for (;;) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(i));
    if (!m) throw new Error(`line ${line}: bad label at '${text.slice(i, i + 20)}'`);
    const key = m[1]!;
    if (key in labels) throw new Error(`line ${line}: label ${key} twice`);
    i += m[0].length;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Error(`line ${line}: unterminated label value of ${key}`);
      if (c === '"') break;
      if (c === '\\') {
        const n = text[i + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${n ?? ''} in label ${key}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[key] = value;
    i++; // the closing quote
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`line ${line}: expected , or } after label ${key}`);
  }
}

export function parsePromText(text: string): Map<string, PromFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, 'HELP' | 'TYPE', string, string];
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
      const f = families.get(name);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type '${rest}'`);
        if (f?.samples.length) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        if (f && f.type !== 'untyped') throw new Error(`line ${line}: second TYPE for ${name}`);
        if (f) f.type = rest as PromFamily['type'];
        else families.set(name, { name, type: rest as PromFamily['type'], samples: [] });
      } else {
        if (f?.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`line ${line}: bad escape in HELP of ${name}`);
        const help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
        if (f) f.help = help;
        else families.set(name, { name, type: 'untyped', help, samples: [] });
      }
      return;
    }
    const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (!nm) throw new Error(`line ${line}: no metric name in '${raw}'`);
    const name = nm[0];
    let rest = raw.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    for (const k of Object.keys(labels)) if (!LABEL.test(k)) throw new Error(`line ${line}: bad label name ${k}`);
    const parts = rest.split(' ');
    if (parts[0] !== '' || parts.length < 2 || parts.length > 3)
      throw new Error(`line ${line}: expected '<name>{labels} <value> [timestamp]', got '${raw}'`);
    const value = parseValue(parts[1]!, line);
    const timestampMs = parts[2] === undefined ? undefined : Number.parseInt(parts[2], 10);
    if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2]))
      throw new Error(`line ${line}: bad timestamp '${parts[2]}'`);
    let f = familyOf(name, families);
    if (!f) {
      f = { name, type: 'untyped', samples: [] };
      families.set(name, f);
    }
    if ((f.type === 'counter' && value < 0) || (f.type === 'counter' && Number.isNaN(value)))
      throw new Error(`line ${line}: counter ${name} at ${value}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`line ${line}: series ${key} twice`);
    seen.add(key);
    f.samples.push({ name, labels, value, ...(timestampMs === undefined ? {} : { timestampMs }) });
  });
  return families;
}

/** The one sample of `name` whose labels include `labels`; throws when there is none or several. */
export function sampleOf(families: Map<string, PromFamily>, name: string, labels: Record<string, string>): number {
  const f = familyOf(name, families);
  const hits = (f?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (hits.length !== 1) throw new Error(`${hits.length} samples of ${name}${JSON.stringify(labels)}`);
  return hits[0]!.value;
}
