/**
 * The `control:` section of a device profile: a mistake names its path, its line, what is wrong
 * and what would be right, like the rest of the profile schema; a good map compiles to the
 * writes, addresses and values the engine runs.
 */
import { describe, expect, it } from 'vitest';
import { parseProfile } from '../../src/profiles/load.js';
import type { ConfigError } from '../../src/yaml/errors.js';

const HEAD = `name: test-hybrid
manufacturer: Acme
models: [H1]
source: { title: Acme Modbus map, version: '1.0', url: 'https://example.com/acme.pdf' }
defaults: { addressBase: 1, wordOrder: little }
identify:
  manufacturer: Acme
  match:
    - { address: 1, type: u16, in: [1] }
roles:
  battery:
    power_W: { address: 10, type: s16, unit: W }
control:
  source: { title: Acme control, version: '1.0', url: 'https://example.com/acme-control.pdf' }
  life: { kind: revert-timer, seconds: 120, fallsBack: true }
  modes:
    self-consumption:
      - { address: 100, type: u16, value: 0 }
    charge:
      - { address: 101, type: u32, lifetime: min }
      - { address: 103, type: f32, power: { scale: 0.001 } }
      - { address: 100, type: u16, value: 1, refresh: true }
`;
// line numbers in HEAD: 13 control, 15 life, 18 self-consumption write, 20-22 the charge writes

function withLine(n: number, line: string): string {
  const lines = HEAD.split('\n');
  lines[n - 1] = line;
  return lines.join('\n');
}

function errors(text: string): ConfigError[] {
  const r = parseProfile(text, 'test-hybrid', 'test-hybrid.yaml');
  if (r.ok) throw new Error('expected the profile to be refused');
  return r.errors;
}

describe('a control map compiles to what the engine writes', () => {
  it('addresses on the wire, word order, values, and the life', () => {
    const r = parseProfile(HEAD, 'test-hybrid', 'x');
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const c = r.profile.control!;
    expect(c.life).toEqual({ kind: 'revert-timer', seconds: 120 });
    expect(c.fallsBack).toBe(true);
    expect(c.modes.hold).toBeUndefined();
    expect(c.modes.charge!.map((w) => [w.address, w.type, w.value, w.refresh])).toEqual([
      [100, 'u32', { kind: 'lifetime', unit: 'min' }, false],
      [102, 'f32', { kind: 'power', scale: 0.001, sign: 1 }, false],
      [99, 'u16', { kind: 'fixed', raw: 1 }, true],
    ]);
    expect(c.modes.charge![0]!.order).toEqual({ wordOrder: 'little', byteOrder: 'big' });
    expect(c.modes.charge![2]!.label).toBe('holding register 100 (0x0064)');
  });

  it('a profile without control: has none', () => {
    const text = HEAD.split('\ncontrol:')[0]!;
    const r = parseProfile(`${text}\n`, 'test-hybrid', 'x');
    expect(r.ok && r.profile.control).toBe(undefined);
  });
});

describe('control mistakes name the path, the line, what is wrong and what is right', () => {
  it('a mode that is not one of the four names the four', () => {
    const [e] = errors(withLine(19, '    charging:'));
    expect(e).toMatchObject({ path: 'control.modes.charging', line: 19, message: "unknown key 'charging'" });
    expect(e!.hint).toBe('allowed keys here: self-consumption, hold, charge, discharge');
  });

  it('self-consumption is required', () => {
    const text = HEAD.replace('    self-consumption:\n      - { address: 100, type: u16, value: 0 }\n', '');
    const [e] = errors(text);
    expect(e).toMatchObject({
      path: 'control.modes.self-consumption',
      line: 16,
      message: "required key 'self-consumption' is missing",
    });
  });

  it('a write with two values', () => {
    const [e] = errors(withLine(18, '      - { address: 100, type: u16, value: 0, lifetime: s }'));
    expect(e).toMatchObject({
      path: 'control.modes.self-consumption[0]',
      line: 18,
      message: 'the write has more than one of value, power and lifetime',
    });
    expect(e!.hint).toMatch(/exactly one of value/);
  });

  it('a write with no value', () => {
    const [e] = errors(withLine(18, '      - { address: 100, type: u16 }'));
    expect(e).toMatchObject({ line: 18, message: 'the write has no value' });
  });

  it('a value that does not fit its type', () => {
    const [e] = errors(withLine(18, '      - { address: 100, type: u16, value: 70000 }'));
    expect(e).toMatchObject({ path: 'control.modes.self-consumption[0].value', line: 18 });
    expect(e!.message).toBe('70000 is not a u16 value');
    expect(e!.hint).toBe('give an integer in 0..65535');
  });

  it('power in a mode that carries none', () => {
    const [e] = errors(withLine(18, '      - { address: 100, type: u16, power: { scale: 1 } }'));
    expect(e).toMatchObject({ path: 'control.modes.self-consumption[0].power', line: 18 });
    expect(e!.message).toBe('self-consumption carries no power');
  });

  it('a charge that ignores the commanded power', () => {
    const [e] = errors(withLine(21, '      - { address: 103, type: f32, value: 0 }'));
    expect(e).toMatchObject({
      path: 'control.modes.charge',
      message: 'charge writes no register from the commanded power',
    });
  });

  it('a revert-timer command without the write that starts the timer', () => {
    const [e] = errors(withLine(22, '      - { address: 100, type: u16, value: 1 }'));
    expect(e).toMatchObject({
      path: 'control.modes.charge',
      message: "charge has no write that starts the device's revert timer",
    });
    expect(e!.hint).toMatch(/refresh: true/);
  });

  it('a life in minutes that is not whole minutes', () => {
    const [e] = errors(withLine(15, '  life: { kind: revert-timer, seconds: 90, fallsBack: true }'));
    expect(e).toMatchObject({ path: 'control.modes.charge[0].lifetime', line: 20 });
    expect(e!.message).toBe('life.seconds 90 is not whole minutes');
  });

  it('a life outside 10..3600 s, and an unknown kind', () => {
    expect(errors(withLine(15, '  life: { kind: revert-timer, seconds: 5, fallsBack: true }'))[0]).toMatchObject({
      path: 'control.life.seconds',
      line: 15,
    });
    const [e] = errors(withLine(15, '  life: { kind: watchdog, seconds: 60, fallsBack: true }'));
    expect(e).toMatchObject({ path: 'control.life.kind', line: 15 });
  });

  it('a register written twice in one mode', () => {
    const [e] = errors(withLine(20, '      - { address: 100, type: u16, lifetime: min }'));
    expect(e).toMatchObject({ path: 'control.modes.charge[2].address', line: 22 });
    expect(e!.message).toBe('register 100 is written twice in charge');
  });

  it('an address below the first register of a document counting from 1', () => {
    const [e] = errors(withLine(18, '      - { address: 0, type: u16, value: 0 }'));
    expect(e).toMatchObject({ path: 'control.modes.self-consumption[0].address', line: 18 });
    expect(e!.message).toMatch(/addressBase is 1/);
  });

  it('the control source is required', () => {
    const [e] = errors(HEAD.replace(/ {2}source: \{ title: Acme control.*\n/, ''));
    expect(e).toMatchObject({ path: 'control.source', message: "required key 'source' is missing" });
  });
});
