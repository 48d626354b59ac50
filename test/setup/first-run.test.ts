import { describe, expect, it } from 'vitest';
import { firstRunPlace, newSetupCode, PACKAGE_PLACE, proposedOf, sameCode } from '../../src/setup/first-run.js';
import { UNCONFIGURED_MARK } from '../../src/setup/site-yaml.js';

describe('the first run', () => {
  it("takes where to listen and where the data goes from the placeholder, the package's where it says nothing or nonsense", () => {
    expect(firstRunPlace(`${UNCONFIGURED_MARK}\n# only comments\n`)).toEqual(PACKAGE_PLACE);
    expect(firstRunPlace(`${UNCONFIGURED_MARK}\nhttp: { host: 127.0.0.1, port: 9000 }\ndataDir: ./data\n`)).toEqual({
      httpHost: '127.0.0.1',
      httpPort: 9000,
      dataDir: './data',
    });
    expect(firstRunPlace(`${UNCONFIGURED_MARK}\nhttp: { port: 99999, host: [1] }\ndataDir: 5\n`)).toEqual(
      PACKAGE_PLACE,
    );
    expect(firstRunPlace(`${UNCONFIGURED_MARK}\nhttp: [ unclosed\n`)).toEqual(PACKAGE_PLACE);
  });

  it('makes codes of nine digits in three groups and takes them typed with or without dashes and spaces, nothing else', () => {
    const code = newSetupCode();
    expect(code).toMatch(/^\d{3}-\d{3}-\d{3}$/);
    expect(sameCode(code, code)).toBe(true);
    expect(sameCode(code.replaceAll('-', ''), code)).toBe(true);
    expect(sameCode(` ${code.replaceAll('-', ' ')} `, code)).toBe(true);
    expect(sameCode(`${code}0`, code)).toBe(false);
    expect(sameCode('', code)).toBe(false);
    expect(sameCode(123456789, code)).toBe(false);
    expect(sameCode(undefined, code)).toBe(false);
  });

  it("writes a scanned device as site-yaml's lines, its note above it", () => {
    const d = proposedOf(
      {
        id: 'inverter-1',
        role: 'inverter',
        profile: 'sunspec',
        connection: { type: 'tcp', host: '10.0.0.5', port: 502, unitId: 1 },
      },
      'unit 1: sitegw-sim HYB-6000',
    );
    expect(d).toMatchObject({
      id: 'inverter-1',
      role: 'inverter',
      profile: 'sunspec',
      notes: ['unit 1: sitegw-sim HYB-6000'],
    });
    expect(d.lines[0]).toBe('  - id: inverter-1');
    expect(d.lines.every((l) => l.startsWith('  '))).toBe(true);
  });
});
