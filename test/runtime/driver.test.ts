/**
 * The runtime gate: which SQLite driver build each Node gets, and that a Node the gateway cannot
 * serve, or a driver that does not load, ends the CLI with one line and exit 1 (src/preflight.ts).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseDriver, SUPPORTED_NODE } from '../../src/store/driver.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function run(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code, signal) => resolve({ code, signal, out, err }));
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-runtime-'));
  dirs.push(d);
  return d;
}

describe('chooseDriver', () => {
  it.each([
    ['20.19.0', 'better-sqlite3-node20'],
    ['20.20.2', 'better-sqlite3-node20'],
    ['v22.14.0', 'better-sqlite3'],
    ['22.22.1', 'better-sqlite3'],
    ['24.21.0', 'better-sqlite3'],
    ['26.1.0', 'better-sqlite3'],
  ])('Node %s opens the store with %s', (version, pkg) => {
    expect(chooseDriver(version)).toEqual({ ok: true, pkg });
  });

  // 18: fastify 5 and the rest need 20; 20.0-20.18: older than the tested floor (Debian's 20.19);
  // 21 is not LTS and not tested; 22.0-22.13 lack Node-API 10, which better-sqlite3 13's binary needs
  it.each(['18.20.4', '20.18.3', '21.7.3', '22.13.1'])('Node %s is refused with the supported range', (version) => {
    const choice = chooseDriver(version);
    expect(choice).toEqual({
      ok: false,
      reason: `sitegw does not run on Node ${version}: it needs Node ${SUPPORTED_NODE} (docs/install.md)`,
    });
  });

  it('says what package.json engines says', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(SUPPORTED_NODE);
  });
});

describe('sitegw CLI on a runtime it cannot serve', () => {
  it('an unsupported Node version: one line on stderr, exit 1, nothing else runs', async () => {
    const dir = tmp();
    // process.versions.node is configurable: the preload makes this Node report 18
    const fake = join(dir, 'node18.mjs');
    writeFileSync(fake, "Object.defineProperty(process.versions, 'node', { value: '18.20.4' });\n");
    const r = await run(['--import', fake, '--import', 'tsx', join(ROOT, 'src/cli.ts'), '--version'], ROOT);
    expect(r).toEqual({
      code: 1,
      signal: null,
      out: '',
      err: `sitegw does not run on Node 18.20.4: it needs Node ${SUPPORTED_NODE} (docs/install.md)\n`,
    });
  });

  it("this Node's driver missing (an optional build that failed): one line naming it and the fix, exit 1", async () => {
    const choice = chooseDriver(process.versions.node);
    if (!choice.ok) throw new Error(`the suite runs on a supported Node, not ${process.versions.node}`);
    // a copy of the install without the driver package, as npm leaves it when the build failed
    const app = tmp();
    cpSync(join(ROOT, 'src'), join(app, 'src'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
    mkdirSync(join(app, 'node_modules'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name !== choice.pkg) symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name));
    }
    const r = await run(['--import', 'tsx', join(app, 'src/cli.ts'), 'demo', '--data-dir', join(app, 'data')], app);
    expect(r.code).toBe(1);
    expect(r.signal).toBeNull();
    expect(r.out).toBe('');
    const lines = r.err.split('\n');
    expect(lines).toHaveLength(2); // one line and its newline
    expect(lines[0]).toContain(`the SQLite driver ${choice.pkg} did not load (Cannot find module '${choice.pkg}'`);
    expect(lines[0]).toMatch(/install build-essential|prebuilt/);
  });
});

describe('only src/store/driver.ts loads a SQLite driver', () => {
  // a value import of 'better-sqlite3' loads 13 whatever the Node, and Node 20 segfaults on it:
  // every other module, test and benchmark must take the driver from sqliteDriver()
  const valueImport =
    /^\s*import\s+(?!type\b)[^;]*?from\s+['"]better-sqlite3(-node20)?['"]|require\(\s*['"]better-sqlite3(-node20)?['"]\s*\)/m;
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => join(e.parentPath, e.name).slice(ROOT.length));

  it.each(['src', 'test', 'bench'])('%s/ has no value import of better-sqlite3', (dir) => {
    const offenders = files(dir).filter(
      (f) => f !== 'src/store/driver.ts' && valueImport.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
