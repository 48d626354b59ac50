/**
 * site.yaml changed as data (src/setup/edit.ts): accepted changes keep every comment and leave a
 * backup; refused ones carry check-config's own line and hint and leave the file byte for byte.
 */
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { editedText, editSiteYaml } from '../../src/setup/edit.js';
import { captureLines } from '../support/output.js';

const COMMENTED = `# the Millers' gateway: written by hand, keep these notes
version: 1
site:
  id: home
  # shown to partners
  name: Home
  timezone: Europe/Berlin # where the buckets start
  currency: EUR
  location:
    latitude: 52.5
    longitude: 13.4
tariff:
  type: time-of-use
  periods:
    - days: [mon, tue, wed, thu, fri, sat, sun]
      from: '00:00'
      to: '24:00'
      importPrice: 0.30 # the supplier's 2026 price
devices:
  - id: inv
    role: inverter
    profile: sunspec
    connection:
      type: tcp
      host: 192.168.1.50
`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function siteFile(text = COMMENTED): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-edit-'));
  dirs.push(dir);
  const file = join(dir, 'site.yaml');
  writeFileSync(file, text, { mode: 0o640 });
  return file;
}
const backupsOf = (file: string) => readdirSync(join(file, '..')).filter((n) => n.startsWith('site.yaml.bak.'));

describe('editSiteYaml', () => {
  it('changes the name and the price, keeps every comment, the old file as a backup, and the mode', async () => {
    const file = siteFile();
    const r = await editSiteYaml(file, [
      { path: ['site', 'name'], value: 'Miller family home' },
      { path: ['tariff', 'periods', 0, 'importPrice'], value: 0.34 },
    ]);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.config.site.name).toBe('Miller family home');
    const now = readFileSync(file, 'utf8');
    // the whole file but the two values, as it was
    expect(now).toBe(
      COMMENTED.replace('name: Home', 'name: Miller family home').replace('importPrice: 0.30', 'importPrice: 0.34'),
    );
    expect(readFileSync(r.backup, 'utf8')).toBe(COMMENTED);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(backupsOf(file)).toHaveLength(1);
    // and check-config itself agrees with what was written
    expect(await checkConfigCommand(file, captureLines(), true)).toBe(0);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "keeps the file's owner and group when root edits it (sudo sitegw setup)",
    async () => {
      // the package's site.yaml is root:sitegw 0660; a root:root file is one the service cannot read
      const file = siteFile();
      chownSync(file, 1234, 4321);
      const r = await editSiteYaml(file, [{ path: ['site', 'name'], value: 'Owner kept' }]);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      const st = statSync(file);
      expect([st.uid, st.gid, st.mode & 0o777]).toEqual([1234, 4321, 0o640]);
    },
  );

  it('adds a section and removes one', async () => {
    const file = siteFile();
    const r = await editSiteYaml(file, [
      { path: ['control'], value: { enabled: true, reserveSoc: 30 } },
      { path: ['tariff'], value: null },
    ]);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const now = readFileSync(file, 'utf8');
    expect(now).not.toContain('tariff:');
    expect(now).toContain("# the Millers' gateway");
    expect(now).toMatch(/control:\n {2}enabled: true\n {2}reserveSoc: 30\n/);
  });

  it('refuses an unknown timezone with check-config’s line and hint, and leaves the file and folder as they were', async () => {
    const file = siteFile();
    const r = await editSiteYaml(file, [{ path: ['site', 'timezone'], value: 'Mars/Olympus_Mons' }]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe('CONFIG_REFUSED');
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: 'site.timezone', line: 7 });
    expect(r.errors[0]!.hint).toMatch(/IANA/);
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    expect(readdirSync(join(file, '..'))).toEqual(['site.yaml']);
  });

  it('refuses a value of the wrong type, a section the page may not change, and a list position past the end', async () => {
    const file = siteFile();
    const bad = await editSiteYaml(file, [{ path: ['control', 'reserveSoc'], value: 'lots' }]);
    expect(bad).toMatchObject({ ok: false, code: 'CONFIG_REFUSED', errors: [{ path: 'control.reserveSoc' }] });
    expect(await editSiteYaml(file, [{ path: ['http', 'port'], value: 1 }])).toMatchObject({
      ok: false,
      code: 'CONFIG_PATH_REFUSED',
    });
    expect(await editSiteYaml(file, [{ path: ['site', '../x'], value: 1 }])).toMatchObject({
      code: 'CONFIG_PATH_REFUSED',
    });
    expect(await editSiteYaml(file, [{ path: ['tariff', 'periods', 5], value: {} }])).toMatchObject({
      code: 'CONFIG_PATH_REFUSED',
    });
    expect(await editSiteYaml(file, [])).toMatchObject({ code: 'CONFIG_PATH_REFUSED' });
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
  });

  it('refuses a path that runs through a value or names a list by key, instead of throwing', async () => {
    const file = siteFile();
    for (const path of [
      ['site', 'name', 'first'],
      ['tariff', 'periods', 'first'],
      ['devices', 0, 'id', 'x'],
    ])
      for (const value of [1, null, { a: 1 }]) {
        const r = await editSiteYaml(file, [{ path, value }]);
        expect(r.ok).toBe(false);
        // removing what is not there may change nothing: told so rather than written and restarted for
        expect(value === null ? ['CONFIG_PATH_REFUSED', 'CONFIG_UNCHANGED'] : ['CONFIG_PATH_REFUSED']).toContain(
          !r.ok && r.code,
        );
      }
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    expect(backupsOf(file)).toEqual([]);
  });

  it('refuses a file that no longer parses, naming it, and changes nothing', async () => {
    const broken = `${COMMENTED}  - id: [\n`;
    const file = siteFile(broken);
    const r = await editSiteYaml(file, [{ path: ['site', 'name'], value: 'X' }]);
    expect(r).toMatchObject({ ok: false, code: 'CONFIG_UNREADABLE' });
    expect(readFileSync(file, 'utf8')).toBe(broken);
  });

  it(`keeps the newest five backups`, async () => {
    const file = siteFile();
    let t = Date.UTC(2026, 11, 1, 12, 0, 0);
    for (let i = 0; i < 7; i++) {
      const r = await editSiteYaml(file, [{ path: ['site', 'name'], value: `Home ${i}` }], {
        now: () => new Date((t += 1000)),
      });
      expect(r.ok).toBe(true);
    }
    const kept = backupsOf(file).sort();
    expect(kept).toHaveLength(5);
    // the newest holds the name before the last change
    expect(readFileSync(join(file, '..', kept[4]!), 'utf8')).toContain('name: Home 5');
  });

  it('two changes in one second keep both old files', async () => {
    const file = siteFile();
    const now = () => new Date(Date.UTC(2026, 11, 1, 12, 0, 0));
    await editSiteYaml(file, [{ path: ['site', 'name'], value: 'A' }], { now });
    await editSiteYaml(file, [{ path: ['site', 'name'], value: 'B' }], { now });
    expect(backupsOf(file).sort()).toEqual(['site.yaml.bak.20261201T120000Z', 'site.yaml.bak.20261201T120000Z-1']);
  });
});

describe('editedText', () => {
  it('gives the example site.yaml back byte for byte when nothing changes but one value', () => {
    const example = readFileSync(new URL('../../examples/site.example.yaml', import.meta.url), 'utf8');
    const r = editedText(example, [{ path: ['control', 'reserveSoc'], value: 20 }]);
    expect(r).toEqual({ text: example });
  });
});
