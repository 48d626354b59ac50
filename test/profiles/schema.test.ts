import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseProfile } from '../../src/profiles/load.js';
import {
  DEFAULT_PROFILE_DIR,
  loadProfiles,
  ProfileLoadError,
  profilesFor,
  rolesOf,
} from '../../src/profiles/registry.js';
import type { ConfigError } from '../../src/yaml/errors.js';

describe('every shipped profile', () => {
  const files = readdirSync(DEFAULT_PROFILE_DIR).filter((f) => f.endsWith('.yaml'));

  it('there are profiles for the devices the issue names', () => {
    expect(files.map((f) => basename(f, '.yaml')).sort()).toEqual(
      expect.arrayContaining(['eastron-sdm120', 'eastron-sdm630', 'huawei-sun2000', 'victron-gx', 'sungrow-sh-rt']),
    );
  });

  it.each(files)('%s passes the schema and names its register document', (file) => {
    const text = readFileSync(join(DEFAULT_PROFILE_DIR, file), 'utf8');
    const r = parseProfile(text, basename(file, '.yaml'), file);
    expect(r.ok ? [] : r.errors).toEqual([]);
    if (!r.ok) return;
    expect(r.profile.source.url).toMatch(/^https?:\/\//);
    expect(rolesOf(r.profile).length).toBeGreaterThan(0);
    expect(r.profile.identify.match.length).toBeGreaterThan(0);
    // the header comment names the same document as source.title
    expect(text.split('\nname:')[0]).toContain(r.profile.source.title.split(' (')[0]!.replace(/^Eastron /, ''));
  });
});

const GOOD = `name: test-meter
manufacturer: Acme
models: [M1]
source:
  title: Acme Modbus map
  version: '1.0'
  url: https://example.com/acme.pdf
identify:
  manufacturer: Acme
  match:
    - { address: 0, type: u16, in: [1] }
roles:
  grid-meter:
    power_W: { address: 10, type: s16, unit: W }
`;

/** GOOD with line `n` (1-based) replaced */
function withLine(n: number, line: string): string {
  const lines = GOOD.split('\n');
  lines[n - 1] = line;
  return lines.join('\n');
}

function errors(text: string, name = 'test-meter'): ConfigError[] {
  const r = parseProfile(text, name, `${name}.yaml`);
  if (r.ok) throw new Error('expected the profile to be refused');
  return r.errors;
}

describe('profile mistakes name the path, the line, what is wrong and what is right', () => {
  it('the minimal profile is accepted', () => {
    expect(parseProfile(GOOD, 'test-meter', 'x').ok).toBe(true);
  });

  it('a unit that does not fit the channel', () => {
    const [e] = errors(withLine(14, '    power_W: { address: 10, type: s16, unit: kWh }'));
    expect(e).toMatchObject({
      path: 'roles.grid-meter.power_W.unit',
      line: 14,
      message: "must be one of: W, kW, got 'kWh'",
    });
    expect(e!.hint).toBe("did you mean 'kW'?");
  });

  it('text where a numeric choice belongs is an error, not a crash', () => {
    const [e] = errors(withLine(14, '    power_W: { address: 10, type: s16, unit: W, sign: minus }'));
    expect(e).toMatchObject({ path: 'roles.grid-meter.power_W.sign', line: 14 });
    expect(e!.message).toMatch(/got 'minus'/);
  });

  it('a misspelt key gets a suggestion', () => {
    const [e] = errors(withLine(14, '    power_W: { adress: 10, type: s16, unit: W }'));
    expect(e).toMatchObject({ path: 'roles.grid-meter.power_W.adress', line: 14 });
    expect(e!.message).toMatch(/did you mean 'address'/);
  });

  it('a channel the role does not have', () => {
    const [e] = errors(withLine(14, '    soc: { address: 10, type: u16, unit: "%" }'));
    expect(e).toMatchObject({ path: 'roles.grid-meter.soc', line: 14 });
    expect(e!.hint).toMatch(/^allowed keys here: power_W, inWh, outWh, state, frequency_Hz, voltage_L1_V, /);
  });

  it('the source document is required', () => {
    const text = GOOD.replace(/source:\n(.*\n){3}/, '');
    const [e] = errors(text);
    expect(e).toMatchObject({ path: 'source', message: "required key 'source' is missing" });
    expect(e!.hint).toMatch(/public register document/);
  });

  it('more than 125 registers per request', () => {
    const [e] = errors(`${GOOD}batching: { maxRegisters: 200 }\n`);
    expect(e).toMatchObject({ path: 'batching.maxRegisters', line: 15, message: 'must be at most 125, got 200' });
  });

  it('address and sum together', () => {
    const [e] = errors(withLine(14, '    power_W: { address: 10, sum: [10, 11], type: s16, unit: W }'));
    expect(e).toMatchObject({
      path: 'roles.grid-meter.power_W.sum',
      line: 14,
      message: 'give either address or sum, not both',
    });
  });

  it('an offset on a lifetime counter', () => {
    const [e] = errors(`${GOOD}    inWh: { address: 12, type: u32, unit: kWh, offset: -100 }\n`);
    expect(e).toMatchObject({
      path: 'roles.grid-meter.inWh.offset',
      line: 15,
      message: 'a lifetime counter takes no offset',
    });
  });

  it('neither address nor sum', () => {
    const [e] = errors(withLine(14, '    power_W: { type: s16, unit: W }'));
    expect(e).toMatchObject({
      path: 'roles.grid-meter.power_W',
      line: 14,
      message: "required key 'address' is missing",
    });
  });

  it('a name that is not the file name', () => {
    const [e] = errors(GOOD, 'acme-m1');
    expect(e).toMatchObject({
      path: 'name',
      line: 1,
      message: "the name 'test-meter' differs from the file name 'acme-m1'",
    });
    expect(e!.hint).toMatch(/name: acme-m1/);
  });

  it('a 64-bit sentinel written as a bare number is refused, quoted it is exact', () => {
    const bare = withLine(14, '    inWh: { address: 10, type: u64, unit: Wh, sentinels: [0xFFFFFFFFFFFFFFFF] }');
    const [e] = errors(bare);
    expect(e).toMatchObject({ path: 'roles.grid-meter.inWh.sentinels[0]', line: 14 });
    expect(e!.hint).toMatch(/quotes/);
    expect(
      parseProfile(
        withLine(14, "    inWh: { address: 10, type: u64, unit: Wh, sentinels: ['0xFFFFFFFFFFFFFFFF'] }"),
        'test-meter',
        'x',
      ).ok,
    ).toBe(true);
  });

  it('a sentinel wider than its register', () => {
    const [e] = errors(withLine(14, '    power_W: { address: 10, type: s16, unit: W, sentinels: [0x10000] }'));
    expect(e!.message).toMatch(/does not fit in 16 bits/);
  });

  it('a string without length, and a pattern that does not compile', () => {
    expect(errors(withLine(11, "    - { address: 0, type: string, pattern: '^A' }"))[0]!.message).toMatch(
      /needs its length/,
    );
    const [e] = errors(withLine(11, "    - { address: 0, type: string, length: 4, pattern: '(' }"));
    expect(e).toMatchObject({ path: 'identify.match[0].pattern', line: 11 });
    expect(e!.message).toMatch(/not a valid regular expression/);
  });

  it('a state rule with two conditions', () => {
    const text = `${GOOD}    state:\n      rules:\n        - registers: [{ address: 0, type: u16 }]\n          in: [0]\n          below: 5\n          state: unknown\n      otherwise: ok\n`;
    const [e] = errors(text);
    expect(e).toMatchObject({
      path: 'roles.grid-meter.state.rules[0]',
      line: 17,
      message: 'the rule has more than one condition',
    });
  });

  it('a register past address 65535', () => {
    const [e] = errors(withLine(14, '    power_W: { address: 65535, type: s32, unit: W }'));
    expect(e!.message).toMatch(/runs past the last register/);
  });

  it('address 0 in a document that counts from 1', () => {
    const [e] = errors(`${GOOD}defaults: { addressBase: 1 }\n`);
    expect(e).toMatchObject({ path: 'identify.match[0].address', line: 11 });
    expect(e!.message).toMatch(/below the first register/);
  });

  it('a YAML syntax slip names its line', () => {
    const [e] = errors(withLine(13, '  grid-meter: {'));
    expect(e!.message).toMatch(/YAML syntax error/);
    expect(e!.line).toBeGreaterThanOrEqual(13);
  });
});

describe('loadProfiles', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('refuses to start with a broken profile, naming file, line and fix', () => {
    dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    writeFileSync(join(dir, 'test-meter.yaml'), withLine(14, '    power_W: { address: 10, type: s16, unit: kWh }'));
    let err: unknown;
    try {
      loadProfiles(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProfileLoadError);
    expect((err as ProfileLoadError).lines).toEqual([
      `${join(dir, 'test-meter.yaml')}:14:40 roles.grid-meter.power_W.unit: must be one of: W, kW, got 'kWh' — did you mean 'kW'?`,
    ]);
  });

  it('reads no profile for a site of SunSpec devices alone, and every one when a device names a file', () => {
    dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    writeFileSync(join(dir, 'test-meter.yaml'), withLine(14, '    power_W: { address: 10, type: s16, unit: kWh }'));
    // not read at all: the broken file does not stop a SunSpec site (and its schema is not compiled)
    expect(profilesFor([{ profile: 'sunspec' }, { profile: 'sunspec' }], dir).names()).toEqual([]);
    expect(() => profilesFor([{ profile: 'sunspec' }, { profile: 'test-meter' }], dir)).toThrow(ProfileLoadError);
  });

  it('loads a folder of good profiles by name', () => {
    dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    writeFileSync(join(dir, 'test-meter.yaml'), GOOD);
    writeFileSync(join(dir, 'README.txt'), 'not a profile');
    expect(loadProfiles(dir).names()).toEqual(['test-meter']);
  });
});
