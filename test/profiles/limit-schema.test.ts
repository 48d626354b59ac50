/**
 * The `limit:` section of a device profile: a mistake names its path, its line, what is wrong and
 * what would be right, like the rest of the profile schema; a good map compiles to the registers,
 * scales and revert the engine runs.
 */
import { describe, expect, it } from 'vitest';
import { parseProfile } from '../../src/profiles/load.js';
import type { ConfigError } from '../../src/yaml/errors.js';

const HEAD = `name: test-pv
manufacturer: Acme
models: [P1]
source: { title: Acme Modbus map, version: '1.0', url: 'https://example.com/acme.pdf' }
defaults: { addressBase: 1, wordOrder: little }
identify:
  manufacturer: Acme
  match:
    - { address: 1, type: u16, in: [1] }
roles:
  inverter:
    power_AC_W: { address: 10, type: s16, unit: W }
limit:
  source: { title: Acme limits, version: '1.0', url: 'https://example.com/acme-limits.pdf' }
  rating: { address: 5001, type: u16, function: input, scale: 100 }
  output:
    setpoint: { address: 200, type: u16, unit: percent, scale: 10, max: 1000 }
    enable: { address: 201, type: u16, on: 0xAA, off: 0x55 }
    timeout: { address: 202, type: u16, unit: s }
    fallback: { address: 203, type: u16, unit: percent, scale: 10 }
    revert: { kind: revert-values, seconds: 60, says: 'section 4.2' }
  device-export-limit:
    setpoint: { address: 300, type: s32, unit: W, none: -1 }
    revert: { kind: unknown, seconds: 60 }
`;
// line numbers in HEAD: 13 limit, 15 rating, 17 output setpoint, 18 enable, 21 revert, 23 export setpoint, 24 its revert

function withLine(n: number, line: string): string {
  const lines = HEAD.split('\n');
  lines[n - 1] = line;
  return lines.join('\n');
}

function errors(text: string): ConfigError[] {
  const r = parseProfile(text, 'test-pv', 'test-pv.yaml');
  if (r.ok) throw new Error('expected the profile to be refused');
  return r.errors;
}

describe('a limit map compiles to what the engine writes', () => {
  it('addresses on the wire, scales, the rating and the revert', () => {
    const r = parseProfile(HEAD, 'test-pv', 'x');
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const l = r.profile.limit!;
    expect(l.rating).toMatchObject({ address: 5000, type: 'u16', fn: 'input', scale: 100 });
    const out = l.maps.output!;
    expect(out.setpoint).toMatchObject({ address: 199, unit: 'percent', scale: 10, max: 1000 });
    expect(out.enable).toMatchObject({ address: 200, on: 0xaa, off: 0x55 });
    expect(out.timeout).toMatchObject({ address: 201, unit: 's' });
    expect(out.revert).toEqual({ kind: 'revert-values', seconds: 60 });
    expect(out.revertKnown).toBe(true);
    expect(out.says).toBe('section 4.2');
    const exp = l.maps['device-export-limit']!;
    expect(exp.setpoint).toMatchObject({ address: 299, type: 's32', unit: 'W', scale: 1, none: -1 });
    expect(exp.setpoint.order).toEqual({ wordOrder: 'little', byteOrder: 'big' });
    // unknown is run as a keep-alive (the gateway re-asserts) and said to be unknown
    expect(exp.revert).toEqual({ kind: 'keep-alive', seconds: 60 });
    expect(exp.revertKnown).toBe(false);
  });

  it('a profile without limit: has none', () => {
    const r = parseProfile(`${HEAD.split('\nlimit:')[0]!}\n`, 'test-pv', 'x');
    expect(r.ok && r.profile.limit).toBe(undefined);
  });
});

describe('limit mistakes name the path, the line, what is wrong and what is right', () => {
  it('a kind of limit that is not one of the two names both', () => {
    const [e] = errors(withLine(22, '  export-limit:'));
    expect(e).toMatchObject({ path: 'limit.export-limit', line: 22, message: "unknown key 'export-limit'" });
    expect(e!.hint).toContain('output');
    expect(e!.hint).toContain('device-export-limit');
  });

  it('a unit that is neither W nor percent suggests the nearest', () => {
    const [e] = errors(withLine(17, '    setpoint: { address: 200, type: u16, unit: kW, scale: 10 }'));
    expect(e).toMatchObject({ path: 'limit.output.setpoint.unit', line: 17 });
    expect(e!.hint).toBe("did you mean 'W'?");
  });

  it('a revert kind no one defined names the kinds', () => {
    const [e] = errors(withLine(21, '    revert: { kind: reverts, seconds: 60 }'));
    expect(e).toMatchObject({ path: 'limit.output.revert.kind', line: 21 });
    expect(e!.hint).toContain('unknown');
  });

  it('a percent setpoint without a rating', () => {
    const [e] = errors(withLine(15, '  unitId: 1'));
    expect(e).toMatchObject({ path: 'limit.output.setpoint.unit', line: 17 });
    expect(e!.message).toContain('needs the rating');
    expect(e!.hint).toContain('limit.rating');
  });

  it('an enable value that does not fit its type', () => {
    const [e] = errors(withLine(18, '    enable: { address: 201, type: u16, on: 70000 }'));
    expect(e).toMatchObject({ path: 'limit.output.enable.on', line: 18, message: '70000 is not a u16 value' });
    expect(e!.hint).toBe('give an integer in 0..65535');
  });

  it('a revert to values without the fallback register', () => {
    const [e] = errors(HEAD.replace('    fallback: { address: 203, type: u16, unit: percent, scale: 10 }\n', ''));
    expect(e).toMatchObject({ path: 'limit.output.revert.kind', line: 20 });
    expect(e!.hint).toContain('fallback');
  });

  it('an unknown revert without the re-assert period', () => {
    const [e] = errors(withLine(24, '    revert: { kind: unknown }'));
    expect(e).toMatchObject({ path: 'limit.device-export-limit.revert', line: 24 });
    expect(e!.hint).toContain('re-asserts');
  });

  it('one register with two jobs', () => {
    const [e] = errors(withLine(18, '    enable: { address: 200, type: u16, on: 1 }'));
    expect(e).toMatchObject({ path: 'limit.output', line: 16 });
    expect(e!.message).toContain('named twice');
  });

  it('a flag switch whose value sets bits outside its mask, or a mask on a 32-bit register', () => {
    const [e] = errors(withLine(18, '    enable: { address: 201, type: u16, mask: 1, on: 3 }'));
    expect(e).toMatchObject({ path: 'limit.output.enable.on', line: 18, message: 'on 3 sets bits outside the mask 1' });
    const [f] = errors(withLine(18, '    enable: { address: 201, type: u32, mask: 1, on: 1 }'));
    expect(f).toMatchObject({ path: 'limit.output.enable.mask', line: 18, message: 'a mask on a u32' });
  });

  it('a fixed value before the limit that does not fit its type', () => {
    const [e] = errors(
      withLine(
        17,
        '    before: [{ address: 199, type: s16, value: 40000 }]\n    setpoint: { address: 200, type: u16, unit: percent, scale: 10, max: 1000 }',
      ),
    );
    expect(e).toMatchObject({ path: 'limit.output.before[0].value', line: 17, message: '40000 is not a s16 value' });
  });

  it('a limit: without either kind of limit', () => {
    const text = `${HEAD.split('\n  output:')[0]!}\n`;
    const [e] = errors(text);
    expect(e).toMatchObject({ path: 'limit', line: 13 });
    expect(e!.hint).toContain('device-export-limit');
  });
});
