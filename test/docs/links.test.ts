/**
 * The repository's documents stand on their own: every relative link in README.md,
 * CONTRIBUTING.md, bench/README.md and docs/*.md reaches a file of the repository, every
 * `#anchor` names a heading of its target, and nothing points to ../shared (a folder outside
 * the repository that once held the spec and the design).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const withoutFences = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** Markdown with fenced code blocks and inline code blanked, so examples are not read as links. */
const prose = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, '');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const headings = withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm);
  for (const [, title = ''] of headings) {
    const base = title
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Inline links and images `[text](target "title")` and reference definitions `[id]: target`. */
function links(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
  const refs = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1] ?? '');
  return [...inline, ...refs];
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

function problems(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  if (text.includes('../shared')) out.push(`${file}: mentions ../shared, which is outside the repository`);
  for (const target of links(text)) {
    if (external(target)) continue;
    const [path = '', anchor] = target.split('#', 2);
    const dest = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
    const inRepo = relative(ROOT, dest);
    if (inRepo.startsWith('..')) {
      out.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    if (!existsSync(dest)) {
      out.push(`${file}: ${target}: no file ${inRepo}`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
      out.push(`${file}: ${target}: an anchor into ${inRepo}, which is not a Markdown file`);
      continue;
    }
    if (!anchors(readFileSync(dest, 'utf8')).has(decodeURIComponent(anchor))) {
      out.push(`${file}: ${target}: ${inRepo} has no heading with the anchor #${anchor}`);
    }
  }
  return out;
}

/** Every `docs/<file>.md "<section>"` a comment in src/ cites, with the file that cites it. */
function citations(): { file: string; doc: string; section: string }[] {
  const out: { file: string; doc: string; section: string }[] = [];
  for (const file of readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const text = readFileSync(join(ROOT, 'src', file), 'utf8');
    for (const m of text.matchAll(/(docs\/[\w-]+\.md)[\s*]*"([^"\n]+)"/g)) {
      out.push({ file: `src/${file}`, doc: m[1] ?? '', section: m[2] ?? '' });
    }
  }
  return out;
}

/** A heading of the document, or (docs/design.md's decisions) a row of one of its tables. */
function hasSection(doc: string, section: string): boolean {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const want = section.toLowerCase();
  const headings = [...withoutFences(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map((m) => m[1]?.toLowerCase());
  if (headings.includes(want)) return true;
  return [...text.matchAll(/^\| ([^|]+?) \|/gm)].some((m) => m[1]?.toLowerCase() === want);
}

describe('links in the documents', () => {
  it('finds the documents it checks', () => {
    for (const f of ['README.md', 'CONTRIBUTING.md', 'bench/README.md', 'docs/api.md', 'docs/design.md']) {
      expect(DOCS, f).toContain(f);
    }
  });

  it.each(DOCS)('%s: every relative link and anchor resolves inside the repository', (file) => {
    expect(problems(file)).toEqual([]);
  });

  it('every document section a comment in src/ cites is there', () => {
    const cited = citations();
    expect(cited.length).toBeGreaterThan(20);
    const missing = cited.filter((c) => !existsSync(join(ROOT, c.doc)) || !hasSection(c.doc, c.section));
    expect(missing.map((c) => `${c.file}: ${c.doc} "${c.section}"`)).toEqual([]);
  });

  it('reads anchors the way GitHub writes them', () => {
    const md = [
      '# A',
      '## Modbus buses, RS-485 and `sitegw scan`',
      '## TLS: mqtts://, wss://',
      '## A',
      '```',
      '# not a heading',
      '```',
    ].join('\n');
    const a = anchors(md);
    expect([...a]).toEqual(['a', 'modbus-buses-rs-485-and-sitegw-scan', 'tls-mqtts-wss', 'a-1']);
  });

  it('finds a broken link, a missing anchor and a link out of the repository', () => {
    const p = (md: string) => links(md);
    expect(p('see [x](docs/api.md#nope) and `[y](not-a-link.md)`')).toEqual(['docs/api.md#nope']);
    expect(p('```\n[y](in-code.md)\n```\n[z]: ../shared/spec.md')).toEqual(['../shared/spec.md']);
  });
});
