import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VERSION, type Migration, migrate } from '../../src/config/version.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');
const versioned = (v: string) => [`version: ${v}`, ...MINIMAL];

describe('site.yaml version', () => {
  it('a file without version: is version 1 and loads as the same file with version: 1', () => {
    const old = parse(MINIMAL);
    const current = parse(versioned('1'));
    if (!old.ok || !current.ok) throw new Error('both must load');
    const { version, ...rest } = current.config;
    expect(version).toBe(1);
    expect(old.config).toEqual(rest);
  });

  it('a version newer than this gateway reads is refused on its line, with the fix', () => {
    const next = CONFIG_VERSION + 1;
    expectSingleError(parse(versioned(String(next))), {
      path: 'version',
      line: 1,
      column: 1,
      message: new RegExp(
        `^version ${next} is newer than this sitegw reads \\((version |versions 1 to )${CONFIG_VERSION}\\)$`,
      ),
      hint: new RegExp(
        `update sitegw to a release that reads version ${next}, or write the file in version ${CONFIG_VERSION}`,
      ),
    });
  });

  it('a version written at the end of the file is placed there', () => {
    expectSingleError(parse(withAppended([`version: ${CONFIG_VERSION + 7}`])), {
      path: 'version',
      line: MINIMAL.length + 1,
      message: /is newer than this sitegw reads/,
      hint: /update sitegw/,
    });
  });

  it('a version that is no whole number is named by the schema', () => {
    const hint = /write the version/;
    const at = { path: 'version', line: 1, hint };
    expectSingleError(parse(versioned('two')), { ...at, message: /^must be a whole number, got 'two'$/ });
    expectSingleError(parse(versioned('0')), { ...at, message: /^must be at least 1, got 0$/ });
  });
});

describe('migrations', () => {
  // two format changes of the kind a release could make: a key renamed, a value's unit changed
  const renamePoll: Migration = {
    change: 'poll.every became poll.intervalSeconds',
    migrate: ({ poll, ...rest }) => {
      const { every, ...p } = (poll ?? {}) as Record<string, unknown>;
      return { ...rest, poll: every === undefined ? p : { ...p, intervalSeconds: every } };
    },
  };
  const minutesToSeconds: Migration = {
    change: 'poll.intervalSeconds was minutes in version 2',
    migrate: (data) => {
      const poll = data.poll as { intervalSeconds?: number } | undefined;
      if (poll?.intervalSeconds === undefined) return { ...data };
      return { ...data, poll: { ...poll, intervalSeconds: poll.intervalSeconds * 60 } };
    },
  };
  const list = [renamePoll, minutesToSeconds];

  it('an old file runs every migration from its version on, in order, into the current version', () => {
    const v1 = { site: { id: 'home' }, poll: { every: 2 } };
    const before = structuredClone(v1);
    const r = migrate(v1, list);
    expect(r).toEqual({ ok: true, data: { site: { id: 'home' }, poll: { intervalSeconds: 120 }, version: 3 } });
    // pure: the parsed data the errors are placed against is left as written
    expect(v1).toEqual(before);
  });

  it('a file of a middle version runs only the migrations after it', () => {
    const r = migrate({ version: 2, poll: { intervalSeconds: 2 } }, list);
    expect(r).toEqual({ ok: true, data: { version: 3, poll: { intervalSeconds: 120 } } });
  });

  it('a file of the current version is taken as written', () => {
    const r = migrate({ version: 3, poll: { intervalSeconds: 2 } }, list);
    expect(r).toEqual({ ok: true, data: { version: 3, poll: { intervalSeconds: 2 } } });
  });

  it('a version past the list is refused', () => {
    const r = migrate({ version: 4 }, list);
    expect(r.ok).toBe(false);
  });
});

describe('files the project writes carry the current version', () => {
  const dir = fileURLToPath(new URL('../../examples/', import.meta.url));
  const examples = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));

  it.each(examples)('examples/%s declares it and passes', (name) => {
    const body = readFileSync(join(dir, name), 'utf8');
    expect(body).toMatch(new RegExp(`^version: ${CONFIG_VERSION}$`, 'm'));
    const r = parseConfig(body, name, dir);
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it("the demo's generated site declares it", () => {
    const ep = { host: '127.0.0.1', port: 1502 };
    const opts = { httpHost: '127.0.0.1', httpPort: 0, dataDir: 'data', pollSeconds: 10, batteryBlocks: 1 };
    const yaml = demoSiteYaml({ inverter: ep, meter: ep }, opts);
    expect(yaml).toMatch(new RegExp(`^version: ${CONFIG_VERSION}$`, 'm'));
    expect(parseConfig(yaml).ok).toBe(true);
  });
});
