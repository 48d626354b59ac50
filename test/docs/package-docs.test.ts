/**
 * The Debian package ships every document README.md links to, at the same relative path under
 * /usr/share/doc/sitegw/, so the README's links work there as in the repository. Reads the list of
 * shipped files from packaging/deb/build.sh (the `for f in …; do install` line), so the package and
 * this check cannot disagree about it. Found by an installer: the package shipped three of the
 * README's linked documents, and postinst named install.md while the file was install.md.gz.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const build = readFileSync(join(ROOT, 'packaging/deb/build.sh'), 'utf8');

/** The files the package's doc loop installs, its globs expanded against the repository. */
function shippedDocs(): Set<string> {
  const loop = build.match(/^for f in ([^;]+); do install -D -m 0644 "\$f" "\$doc\/\$f"; done$/m);
  if (!loop?.[1]) throw new Error('packaging/deb/build.sh has no doc loop');
  const out = new Set<string>();
  for (const pattern of loop[1].trim().split(/\s+/)) {
    const star = pattern.indexOf('*');
    if (star < 0) {
      out.add(pattern);
      continue;
    }
    const dir = pattern.slice(0, pattern.lastIndexOf('/'));
    const suffix = pattern.slice(star + 1);
    for (const f of readdirSync(join(ROOT, dir))) if (f.endsWith(suffix)) out.add(`${dir}/${f}`);
  }
  return out;
}

describe('the package documentation', () => {
  it('ships every document the README links to', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(
      [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((m) => m[1] ?? '')
        .filter((target) => !/^[a-z]+:/.test(target)),
    );
    expect(linked.size).toBeGreaterThan(10);
    const shipped = shippedDocs();
    expect([...linked].filter((target) => !shipped.has(target))).toEqual([]);
  });

  it('points the unit and postinst at a file the package ships', () => {
    const shipped = shippedDocs();
    const unitDoc = build.match(/Documentation=file:\/usr\/share\/doc\/sitegw\/([^#]+)#/)?.[1];
    const postinst = readFileSync(join(ROOT, 'packaging/deb/postinst'), 'utf8');
    const guide = postinst.match(/Guide: \/usr\/share\/doc\/sitegw\/(\S+)/)?.[1];
    expect(unitDoc && shipped.has(unitDoc), `unit: ${unitDoc}`).toBe(true);
    expect(guide && shipped.has(guide), `postinst: ${guide}`).toBe(true);
  });
});
