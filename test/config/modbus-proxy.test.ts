/** site.yaml `modbusProxy:` (docs/modbus-proxy.md): defaults, and each mistake named at its line with the fix. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');

describe('modbusProxy in site.yaml', () => {
  it('an entry gets writes: deny and host 127.0.0.1 by default; none by default', () => {
    const r = parse(withAppended(['modbusProxy:', '  - { port: 1502, target: inv }']));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.modbusProxy).toEqual([{ port: 1502, target: 'inv', writes: 'deny', host: '127.0.0.1' }]);
    const none = parse(MINIMAL);
    expect(none.ok && none.config.modbusProxy).toEqual([]);
  });

  it('a target that is no device of the file is named, with the closest id', () => {
    expectSingleError(parse(withAppended(['modbusProxy:', '  - { port: 1502, target: inverter }'])), {
      path: 'modbusProxy[0].target',
      line: 17,
      message: /no device with id 'inverter'/,
      hint: /name one of the devices: inv|did you mean 'inv'/,
    });
  });

  it('two entries on one port, and the API port, are refused', () => {
    const errors = errorsOf(
      parse(
        withAppended([
          'modbusProxy:',
          '  - { port: 1502, target: inv }',
          '  - { port: 1502, target: inv, writes: allow }',
          '  - { port: 8080, target: inv }',
        ]),
      ),
    );
    expect(errors.map((e) => [e.path, e.message])).toEqual([
      ['modbusProxy[1].port', 'port 1502 is already used by modbusProxy[0]'],
      ['modbusProxy[2].port', "port 8080 is the API's port (http.port)"],
    ]);
  });

  it('writes is deny or allow', () => {
    expectSingleError(parse(withAppended(['modbusProxy:', '  - { port: 1502, target: inv, writes: yes }'])), {
      path: 'modbusProxy[0].writes',
      line: 17,
      message: /deny|allow/,
      hint: /'deny' \(read only\) or 'allow'/,
    });
  });
});
