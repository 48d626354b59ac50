/**
 * `sitegw scan` against every golden-corpus image: each device built from its public register
 * document is recognised as what the document says it is (the profile, or SunSpec), with the
 * model the document's identity registers name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { scanCommand } from '../../src/cli/scan.js';
import { allFixtures, type ImageServer, serveImage } from '../support/register-image.js';

const FIXTURES = allFixtures();

describe.each(FIXTURES.map((f) => [f.name, f] as const))('sitegw scan on %s', (_name, f) => {
  let server: ImageServer | undefined;
  afterEach(async () => server?.close());

  it('finds it at its unit id, as the profile its site.yaml names, with the model its identity registers give', async () => {
    server = await serveImage(f);
    const out: string[] = [];
    const code = await scanCommand(['--tcp', `${server.host}:${server.port}`, '--units', String(f.image.unitId)], {
      out: (t) => out.push(t),
      err: () => undefined,
    });
    const text = out.join('');
    expect(code, text).toBe(0);
    const profile = f.devices[0]!.profile;
    const identity = Object.values(f.expect.identity ?? {})[0];
    // the unit's entry: its line and the indented lines under it (a vendor map next to SunSpec)
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.trimStart().startsWith(`unit ${f.image.unitId} `));
    expect(at, text).toBeGreaterThanOrEqual(0);
    let end = at + 1;
    while (end < lines.length && /^ {12}\S/.test(lines[end]!)) end++;
    const line = lines.slice(at, end).join('\n');
    if (identity?.model) expect(line).toContain(`${identity.manufacturer} ${identity.model}`);
    expect(line).toContain(profile === 'sunspec' ? 'SunSpec models' : `profile ${profile}`);
    expect(text).toContain(`profile: ${profile}`);
  });
});

// a vendor's fixed unit id outside 1-10 must be among the ids a TCP scan tries unasked
const FIXED_IDS = FIXTURES.filter((f) => f.image.unitId > 10);

describe.each(FIXED_IDS.map((f) => [f.name, f.image.unitId, f] as const))(
  'sitegw scan without --units on %s',
  (_name, unitId, f) => {
    let server: ImageServer | undefined;
    afterEach(async () => server?.close());

    it(`reaches its unit ${unitId} among the default TCP unit ids`, async () => {
      server = await serveImage(f);
      const out: string[] = [];
      const code = await scanCommand(['--tcp', `${server.host}:${server.port}`], {
        out: (t) => out.push(t),
        err: () => undefined,
      });
      const text = out.join('');
      expect(code, text).toBe(0);
      expect(
        text.split('\n').some((l) => l.trimStart().startsWith(`unit ${unitId} `)),
        text,
      ).toBe(true);
    });
  },
);
