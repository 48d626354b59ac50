import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended, withLine } from './fixtures.js';

const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');

const BATTERY = [
  '  - id: bat',
  '    role: battery',
  '    profile: sunspec',
  '    connection:',
  '      type: tcp',
  '      host: 192.168.1.51',
];

describe('schema mistakes name the path, the line, what is wrong and what is right', () => {
  it('wrong type: text where a number belongs', () => {
    expectSingleError(parse(withAppended(['      port: abc'])), {
      path: 'devices[0].connection.port',
      line: 16,
      column: 7,
      message: /^must be a whole number, got 'abc'$/,
      hint: /usually 502/,
    });
  });

  it('wrong type: a quoted number is told to lose its quotes', () => {
    expectSingleError(parse(withAppended(['      unitId: "3"'])), {
      path: 'devices[0].connection.unitId',
      line: 16,
      message: /must be a whole number, got '3'/,
      hint: /write 3 without quotes/,
    });
  });

  it('wrong type: a number where text belongs is told to quote it', () => {
    expectSingleError(parse(withLine(3, '  name: 1234')), {
      path: 'site.name',
      line: 3,
      message: /must be text, got 1234/,
      hint: /quotes, e.g. '1234'/,
    });
  });

  it('out of range, above the maximum', () => {
    expectSingleError(parse(withAppended(['      port: 70000'])), {
      path: 'devices[0].connection.port',
      line: 16,
      column: 7,
      message: /^must be at most 65535, got 70000$/,
      hint: /^use the device's Modbus TCP port, usually 502$/,
    });
  });

  it('out of range, below the minimum', () => {
    expectSingleError(parse(withAppended(['poll:', '  intervalSeconds: 0'])), {
      path: 'poll.intervalSeconds',
      line: 17,
      column: 3,
      message: /^must be at least 1, got 0$/,
      hint: /between 1 and 3600/,
    });
  });

  it('an efficiency given in percent is refused with the fraction to write', () => {
    expectSingleError(parse(withAppended(['control:', '  chargeEfficiency: 95'])), {
      path: 'control.chargeEfficiency',
      line: 17,
      column: 3,
      message: /^must be at most 1, got 95$/,
      hint: /fraction between 0.5 and 1, e.g. 0.95/,
    });
  });

  it('latitude outside -90..90', () => {
    expectSingleError(parse(withLine(7, '    latitude: 152.5')), {
      path: 'site.location.latitude',
      line: 7,
      message: /must be at most 90, got 152.5/,
      hint: /degrees north between -90 and 90/,
    });
  });

  it('unit id above 247', () => {
    expectSingleError(parse(withAppended(['      unitId: 248'])), {
      path: 'devices[0].connection.unitId',
      line: 16,
      message: /at most 247, got 248/,
      hint: /0 to 247/,
    });
  });

  it('unknown key with a suggestion among the allowed keys', () => {
    expectSingleError(parse(withAppended(['      prot: 502'])), {
      path: 'devices[0].connection.prot',
      line: 16,
      column: 7,
      message: /^unknown key 'prot' — did you mean 'port'\?$/,
      hint: /allowed keys here: type, host, port, unitId, timeoutMs/,
    });
  });

  it('unknown key that is nowhere near an allowed one gets no made-up suggestion', () => {
    const e = expectSingleError(parse(withAppended(['colour: blue'])), {
      path: 'colour',
      line: 16,
      column: 1,
      message: /^unknown key 'colour'$/,
      hint: /allowed keys here: site, http, dataDir, poll, api, grid, ws, retention, tariff, uplink, auth, devices/,
    });
    expect(e.message).not.toMatch(/did you mean/);
  });

  it('a key written one level too high is told where it belongs', () => {
    expectSingleError(parse(withLine(12, '    profile: sunspec\n    host: 192.168.1.50')), {
      path: 'devices[0].host',
      line: 13,
      message: /unknown key 'host'/,
      hint: /'host' belongs under 'connection:'/,
    });
  });

  it('missing required key points at its parent', () => {
    expectSingleError(parse(withLine(4, null)), {
      path: 'site.timezone',
      line: 1,
      column: 1,
      message: /^required key 'timezone' is missing$/,
      hint: /IANA zone name such as Europe\/Berlin/,
    });
  });

  it('missing required key inside a device points at that device', () => {
    expectSingleError(parse(withLine(15, null)), {
      path: 'devices[0].connection.host',
      line: 13,
      column: 5,
      message: /required key 'host' is missing/,
      hint: /IP address or host name/,
    });
  });

  it('missing devices section', () => {
    expectSingleError(parse(MINIMAL.slice(0, 8)), {
      path: 'devices',
      line: 1,
      message: /required key 'devices' is missing/,
      hint: /list the site's devices/,
    });
  });

  it('bad enum lists the allowed values and suggests the near one', () => {
    expectSingleError(parse(withLine(11, '    role: grid-metre')), {
      path: 'devices[0].role',
      line: 11,
      column: 5,
      message: /^must be one of: inverter, battery, grid-meter, consumption-meter, got 'grid-metre'$/,
      hint: /did you mean 'grid-meter'\?/,
    });
  });

  it('bad enum without a near value explains the choice', () => {
    expectSingleError(parse(withAppended(['api:', '  socScale: 0-1'])), {
      path: 'api.socScale',
      line: 17,
      message: /must be one of: percent, fraction, got '0-1'/,
      hint: /use 'percent' unless/,
    });
  });

  it('an id with capitals and spaces is told a safe form', () => {
    expectSingleError(parse(withLine(2, '  id: Miller Home')), {
      path: 'site.id',
      line: 2,
      message: /lowercase letters, digits, '-' and '_', got 'Miller Home'/,
      hint: /'miller-home'/,
    });
  });

  it('an empty section is told to indent its keys or go', () => {
    expectSingleError(parse(withAppended(['http:'])), {
      path: 'http',
      line: 16,
      message: /is empty/,
      hint: /indent its keys under it, or remove the line/,
    });
  });

  it('a device list with no devices', () => {
    expectSingleError(parse([...MINIMAL.slice(0, 8), 'devices: []']), {
      path: 'devices',
      line: 9,
      message: /is an empty list/,
      hint: /list the site's devices/,
    });
  });
});

describe('semantic mistakes use the same form', () => {
  it('bad timezone suggests the near zone', () => {
    expectSingleError(parse(withLine(4, '  timezone: Europe/Berlim')), {
      path: 'site.timezone',
      line: 4,
      column: 3,
      message: /^'Europe\/Berlim' is not an IANA time zone$/,
      hint: /did you mean 'Europe\/Berlin'\?/,
    });
  });

  it('an offset instead of a zone name is explained', () => {
    expectSingleError(parse(withLine(4, '  timezone: GMT+1')), {
      path: 'site.timezone',
      line: 4,
      message: /'GMT\+1' is not an IANA time zone/,
      hint: /Region\/City, not an offset/,
    });
  });

  it('bad currency', () => {
    expectSingleError(parse(withLine(5, '  currency: EURO')), {
      path: 'site.currency',
      line: 5,
      message: /^'EURO' is not an ISO 4217 currency code$/,
      hint: /three-letter ISO 4217 code such as EUR/,
    });
  });

  it('currency in lowercase or as a symbol is told the code', () => {
    expectSingleError(parse(withLine(5, '  currency: gbp')), {
      path: 'site.currency',
      line: 5,
      message: /'gbp'/,
      hint: /capitals: 'GBP'/,
    });
    expectSingleError(parse(withLine(5, '  currency: €')), {
      path: 'site.currency',
      line: 5,
      message: /'€'/,
      hint: /symbol: 'EUR'/,
    });
  });

  it('duplicate device id points at the second one', () => {
    expectSingleError(
      parse(
        withAppended([
          '  - id: inv',
          '    role: battery',
          '    profile: sunspec',
          '    connection: { type: tcp, host: 192.168.1.51 }',
        ]),
      ),
      {
        path: 'devices[1].id',
        line: 16,
        column: 5,
        message: /^device id 'inv' is already used by devices\[0\]$/,
        hint: /give every device its own id/,
      },
    );
  });

  it('duplicate address (same host, default port and unit id)', () => {
    // two inverters: roles of one device (different roles, same profile) may share an address
    expectSingleError(
      parse(
        withAppended([
          '  - id: inv2',
          '    role: inverter',
          '    profile: sunspec',
          '    connection:',
          '      type: tcp',
          '      host: 192.168.1.50',
        ]),
      ),
      {
        path: 'devices[1].connection',
        line: 19,
        column: 5,
        message: /same address as devices\[0\] \('inv'\): 192\.168\.1\.50:502 unit 1/,
        hint: /different unitIds/,
      },
    );
  });

  it('same host and port with different unit ids is fine', () => {
    const result = parse(
      withAppended([
        '  - id: meter',
        '    role: grid-meter',
        '    profile: sunspec',
        '    connection: { type: tcp, host: 192.168.1.50, unitId: 2 }',
      ]),
    );
    expect(result.ok).toBe(true);
  });

  it('battery naming a missing inverter', () => {
    expectSingleError(parse(withAppended([...BATTERY.slice(0, 3), '    inverter: inverter-1', ...BATTERY.slice(3)])), {
      path: 'devices[1].inverter',
      line: 19,
      column: 5,
      message: /^no device with id 'inverter-1' in this file$/,
      hint: /name one of the inverters: inv/,
    });
  });

  it('battery naming a device that is not an inverter', () => {
    const meter = [
      '  - id: meter',
      '    role: grid-meter',
      '    profile: sunspec',
      '    connection: { type: tcp, host: 192.168.1.60 }',
    ];
    expectSingleError(
      parse(withAppended([...meter, ...BATTERY.slice(0, 3), '    inverter: meter', ...BATTERY.slice(3)])),
      {
        path: 'devices[2].inverter',
        line: 23,
        message: /'meter' is a grid-meter, not an inverter/,
        hint: /inv/,
      },
    );
  });

  it('a second grid-meter', () => {
    const meter = (id: string, host: string) => [
      `  - id: ${id}`,
      '    role: grid-meter',
      '    profile: sunspec',
      `    connection: { type: tcp, host: ${host} }`,
    ];
    expectSingleError(parse(withAppended([...meter('m1', '10.0.0.1'), ...meter('m2', '10.0.0.2')])), {
      path: 'devices[2].role',
      line: 21,
      message: /a second grid-meter; devices\[1\] already/,
      hint: /consumption-meter/,
    });
  });

  it('host with a port pasted into it', () => {
    expectSingleError(parse(withLine(15, '      host: 192.168.1.50:1502')), {
      path: 'devices[0].connection.host',
      line: 15,
      message: /'192\.168\.1\.50:1502' is not an IP address or host name/,
      hint: /write only '192\.168\.1\.50' here and put 1502 under 'port:'/,
    });
  });
});

describe('mistakes in different places are all reported, in file order', () => {
  it('reports a schema and a semantic error together', () => {
    const errors = errorsOf(parse(withLine(4, '  timezone: Mars/Olympus', withAppended(['      port: 0']))));
    expect(errors.map((e) => [e.path, e.line])).toEqual([
      ['site.timezone', 4],
      ['devices[0].connection.port', 16],
    ]);
  });
});

describe('YAML syntax errors and file shape', () => {
  it('a syntax error carries its line', () => {
    const e = expectSingleError(parse(withLine(12, '    profile sunspec')), {
      path: 'devices[0]',
      line: 12,
      column: 5,
      message: /not a 'key: value' pair/,
      hint: /space after the colon/,
    });
    expect(e.message).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  it('mis-indented key', () => {
    expectSingleError(parse(withLine(3, ' name: Home')), {
      path: '',
      line: 3,
      column: 1,
      message: /does not line up/,
      hint: /same column/,
    });
  });

  it('tab indentation', () => {
    expectSingleError(parse(withLine(3, '\tname: Home')), {
      path: '',
      line: 3,
      column: 1,
      message: /^a tab is used for indentation$/,
      hint: /spaces only/,
    });
  });

  it('duplicate key names the earlier line', () => {
    expectSingleError(parse(withAppended(['      host: 192.168.1.99'])), {
      path: 'devices[0].connection.host',
      line: 16,
      column: 7,
      message: /^key 'host' appears twice in the same block$/,
      hint: /other is on line 15/,
    });
  });

  it('an unclosed quote points where it opens, not at the end of the file', () => {
    expectSingleError(parse(withLine(3, '  name: "Home')), {
      path: 'site.name',
      line: 3,
      column: 9,
      message: /quote or bracket opened here is not closed/,
      hint: /close every quote/,
    });
  });

  it('an unclosed bracket points where it opens', () => {
    expectSingleError(parse(withLine(7, '    latitude: [52.5')), {
      path: 'site.location.latitude',
      line: 7,
      column: 15,
      message: /not closed/,
      hint: /\[/,
    });
  });

  it('more than one document', () => {
    expectSingleError(parse(withAppended(['---', 'site: {}'])), {
      path: '',
      line: 16,
      message: /more than one YAML document/,
      hint: /remove the second '---'/,
    });
  });

  it('an empty file', () => {
    expectSingleError(parseConfig('', 'site.yaml'), {
      path: '',
      line: 1,
      message: /^site\.yaml is empty/,
      hint: /site: and devices:/,
    });
  });

  it('a file of comments only counts as empty', () => {
    expectSingleError(parseConfig('# todo\n\n', 'x.yaml'), {
      path: '',
      line: 1,
      message: /^x\.yaml is empty/,
      hint: /site:/,
    });
  });

  it('a top-level list', () => {
    expectSingleError(parseConfig('# devices\n- id: inv\n  role: inverter\n'), {
      path: '',
      line: 2,
      column: 1,
      message: /^the top level must be a mapping of keys, found a list/,
      hint: /top-level keys such as site: and devices:/,
    });
  });

  it('a top-level scalar', () => {
    expectSingleError(parseConfig('hello\n'), { path: '', line: 1, message: /found the value 'hello'/, hint: /site:/ });
  });

  it('an alias bomb is refused instead of expanding', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ];
    const errors = errorsOf(parseConfig(text(bomb)));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/cannot read the file/);
  });
});

describe('messages fit the field', () => {
  it('a number given for an enum is told the choices, not to quote it', () => {
    expectSingleError(parse(withLine(11, '    role: 5')), {
      path: 'devices[0].role',
      line: 11,
      message: /^must be one of: inverter, battery, grid-meter, consumption-meter, got 5$/,
      hint: /grid-meter/,
    });
  });

  it('a bad profile name is told about profiles, not ids', () => {
    const e = expectSingleError(parse(withLine(12, '    profile: Sun Spec')), {
      path: 'devices[0].profile',
      line: 12,
      message: /lowercase letters, digits, '-' and '_', got 'Sun Spec'/,
      hint: /'sunspec' or the name of a device profile/,
    });
    expect(e.hint).not.toMatch(/ids appear/);
  });

  it('a device written as a bare word', () => {
    expectSingleError(parse([...MINIMAL.slice(0, 9), '  - inv']), {
      path: 'devices[0]',
      line: 10,
      column: 5,
      message: /must be a mapping of keys, got 'inv'/,
      hint: /id, role, profile and connection/,
    });
  });

  it("'inverter' on a device that is not a battery", () => {
    expectSingleError(parse(withLine(12, '    profile: sunspec\n    inverter: inv')), {
      path: 'devices[0].inverter',
      line: 13,
      message: /^'inverter' only applies to a battery; this device's role is inverter$/,
      hint: /remove the line/,
    });
  });
});
