/** site.yaml `limits:`: defaults are filled, and timeouts that cannot work together are named with their line. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');
const after = MINIMAL.length;

describe('limits in site.yaml', () => {
  it('keeps set values and fills the others', () => {
    const r = parse(
      withAppended(['limits:', '  http:', '    maxConnections: 16', '  dynamicTariffs:', '    maxPerClient: 2']),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.limits.http).toMatchObject({
      maxConnections: 16,
      maxConnectionsPerAddress: 32,
      headersSeconds: 10,
    });
    expect(r.config.limits.dynamicTariffs).toMatchObject({ maxPerClient: 2, maxValuesPerClientPerDay: 50000 });
  });

  it('a headers timeout longer than the request timeout is named at the line that makes it so', () => {
    expectSingleError(parse(withAppended(['limits:', '  http:', '    headersSeconds: 20', '    requestSeconds: 15'])), {
      path: 'limits.http.headersSeconds',
      line: after + 3,
      message: /headersSeconds \(20\) is longer than requestSeconds \(15\)/,
      hint: /at most requestSeconds, or raise requestSeconds/,
    });
    expectSingleError(parse(withAppended(['limits:', '  http:', '    headersSeconds: 45'])), {
      path: 'limits.http.headersSeconds',
      line: after + 3,
      message: /requestSeconds \(30\)/,
      hint: /raise requestSeconds/,
    });
  });

  it('out-of-range values say what is allowed', () => {
    expectSingleError(parse(withAppended(['limits:', '  http:', '    maxConnections: 0'])), {
      path: 'limits.http.maxConnections',
      line: after + 3,
      message: /at least 1/,
      hint: /between 1 and 10000, usually 128/,
    });
    expectSingleError(parse(withAppended(['limits:', '  dynamicTariffs:', '    maxValuesPerTariff: 10'])), {
      path: 'limits.dynamicTariffs.maxValuesPerTariff',
      line: after + 3,
      message: /at least 96/,
      hint: /usually 350400/,
    });
  });
});
