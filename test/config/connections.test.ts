import { describe, expect, it } from 'vitest';
import type { SiteConfig } from '../../src/config/types.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { errorsOf, expectSingleError, MINIMAL, text } from './fixtures.js';

/** MINIMAL (the inverter's connection is lines 13-15) with the inverter's connection keys replaced. */
function withConnection(lines: readonly string[], extraDevices: readonly string[] = []): string {
  return text([...MINIMAL.slice(0, 13), ...lines.map((l) => `      ${l}`), ...extraDevices]);
}

const parse = (yaml: string) => parseConfig(yaml, 'site.yaml', '/etc/sitegw');

function accepted(yaml: string): SiteConfig {
  const r = parse(yaml);
  if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 2));
  return r.config;
}

/** a second device on lines 16.. with the given connection keys */
function meter(id: string, lines: readonly string[]): string[] {
  return [
    `  - id: ${id}`,
    '    role: consumption-meter',
    '    profile: sunspec',
    '    connection:',
    ...lines.map((l) => `      ${l}`),
  ];
}

describe('rtu and rtu-over-tcp connections', () => {
  it('fills the serial defaults and leaves the inter-frame delay to the bus', () => {
    const c = accepted(withConnection(['type: rtu', 'device: /dev/ttyUSB0'])).devices[0]!.connection;
    expect(c).toEqual({
      type: 'rtu',
      device: '/dev/ttyUSB0',
      baudRate: 9600,
      parity: 'none',
      dataBits: 8,
      stopBits: 1,
      unitId: 1,
      timeoutMs: 1000,
    });
  });

  it('keeps every serial setting that is written', () => {
    const c = accepted(
      withConnection([
        'type: rtu',
        'device: /dev/serial/by-id/usb-FTDI-if00',
        'baudRate: 19200',
        'parity: even',
        'stopBits: 2',
        'unitId: 247',
        'timeoutMs: 300',
        'interFrameDelayMs: 2.5',
      ]),
    ).devices[0]!.connection;
    expect(c).toMatchObject({
      baudRate: 19200,
      parity: 'even',
      stopBits: 2,
      unitId: 247,
      timeoutMs: 300,
      interFrameDelayMs: 2.5,
    });
  });

  it('rtu-over-tcp takes host and port and gets no TCP default port', () => {
    const c = accepted(withConnection(['type: rtu-over-tcp', 'host: 192.168.1.60', 'port: 8899', 'unitId: 3']))
      .devices[0]!.connection;
    expect(c).toEqual({ type: 'rtu-over-tcp', host: '192.168.1.60', port: 8899, unitId: 3, timeoutMs: 1000 });
    expectSingleError(parse(withConnection(['type: rtu-over-tcp', 'host: 192.168.1.60'])), {
      path: 'devices[0].connection.port',
      line: 13,
      message: /^required key 'port' is missing$/,
      hint: /TCP port the serial server's web page shows/,
    });
  });

  it('an unknown type is named with the known ones and a likely fix', () => {
    expectSingleError(parse(withConnection(['type: rtu-over-tpc', 'host: 192.168.1.60'])), {
      path: 'devices[0].connection.type',
      line: 14,
      column: 7,
      message: /^must be one of: tcp, rtu, rtu-over-tcp, got 'rtu-over-tpc'$/,
      hint: /did you mean 'rtu-over-tcp'\?/,
    });
    expectSingleError(parse(withConnection(['type: modbus', 'host: 192.168.1.60'])), {
      path: 'devices[0].connection.type',
      line: 14,
      message: /^must be one of: tcp, rtu, rtu-over-tcp, got 'modbus'$/,
      hint: /type: tcp and the device's host, or type: rtu and its serial device/,
    });
  });

  it('a missing type says which types exist', () => {
    expectSingleError(parse(withConnection(['host: 192.168.1.60'])), {
      path: 'devices[0].connection.type',
      line: 13,
      message: /^required key 'type' is missing$/,
      hint: /one of tcp, rtu, rtu-over-tcp/,
    });
  });

  it('unit id 0 is refused on a serial line (it is the broadcast address)', () => {
    expectSingleError(parse(withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'unitId: 0'])), {
      path: 'devices[0].connection.unitId',
      line: 16,
      message: /^must be at least 1, got 0$/,
      hint: /1 to 247/,
    });
  });

  it('a TCP key on an rtu connection is an unknown key with the rtu keys listed', () => {
    expectSingleError(parse(withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'port: 502'])), {
      path: 'devices[0].connection.port',
      line: 16,
      message: /^unknown key 'port'/,
      hint: /allowed keys here: type, device, baudRate, parity, dataBits, stopBits, unitId, timeoutMs, interFrameDelayMs/,
    });
  });

  it('parity, stop bits, data bits and the device path are checked with the fix', () => {
    expectSingleError(parse(withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'parity: Even'])), {
      path: 'devices[0].connection.parity',
      line: 16,
      message: /must be one of: none, even, odd, got 'Even'/,
      hint: /did you mean 'even'\?/,
    });
    expectSingleError(parse(withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'stopBits: 3'])), {
      path: 'devices[0].connection.stopBits',
      line: 16,
      message: /^must be at most 2, got 3$/,
      hint: /1 or 2/,
    });
    expectSingleError(parse(withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'dataBits: 7'])), {
      path: 'devices[0].connection.dataBits',
      line: 16,
      message: /^must be at least 8, got 7$/,
      hint: /Modbus RTU uses 8 data bits/,
    });
    expectSingleError(parse(withConnection(['type: rtu', 'device: ttyUSB0'])), {
      path: 'devices[0].connection.device',
      line: 15,
      message: /not in the expected form, got 'ttyUSB0'/,
      hint: /e\.g\. \/dev\/ttyUSB0/,
    });
  });

  it('two devices at one address of one serial line', () => {
    // an SDM630 set to the inverter's address (another profile: not a role of the same device)
    const sdm = meter('house', ['type: rtu', 'device: /dev/ttyUSB0', 'unitId: 2']).map((l) =>
      l.replace('sunspec', 'eastron-sdm630'),
    );
    const yaml = withConnection(['type: rtu', 'device: /dev/ttyUSB0', 'unitId: 2'], sdm);
    expectSingleError(parse(yaml), {
      path: 'devices[1].connection',
      line: 20,
      message: /^same address as devices\[0\] \('inv'\): \/dev\/ttyUSB0 unit 2$/,
      hint: /every device on one RS-485 line needs its own Modbus address/,
    });
  });

  it('the same unit id on different serial ports, or on a serial port and a TCP device, is fine', () => {
    const ok = withConnection(
      ['type: rtu', 'device: /dev/ttyUSB0'],
      [
        ...meter('m1', ['type: rtu', 'device: /dev/ttyUSB1']),
        ...meter('m2', ['type: tcp', 'host: 192.168.1.60']),
        ...meter('m3', ['type: rtu-over-tcp', 'host: 192.168.1.61', 'port: 502']),
      ],
    );
    expect(accepted(ok).devices.map((d) => d.connection.unitId)).toEqual([1, 1, 1, 1]);
  });

  it('devices on one serial port must share its line settings', () => {
    const yaml = withConnection(
      ['type: rtu', 'device: /dev/ttyUSB0', 'baudRate: 9600'],
      meter('house', ['type: rtu', 'device: /dev/ttyUSB0', 'unitId: 2', 'baudRate: 19200']),
    );
    expectSingleError(parse(yaml), {
      path: 'devices[1].connection.baudRate',
      line: 24,
      message: /^baudRate 19200 differs from devices\[0\] \('inv'\) on the same serial port \(9600\)$/,
      hint: /write baudRate: 9600 here/,
    });
    // a default counts as a setting: parity none (default) against parity even
    const byDefault = withConnection(
      ['type: rtu', 'device: /dev/ttyUSB0'],
      meter('house', ['type: rtu', 'device: /dev/ttyUSB0', 'unitId: 2', 'parity: even']),
    );
    expect(errorsOf(parse(byDefault)).map((e) => e.path)).toEqual(['devices[1].connection.parity']);
  });

  it('one TCP port is either Modbus TCP or RTU over TCP', () => {
    const yaml = withConnection(
      ['type: tcp', 'host: 192.168.1.60', 'port: 502'],
      meter('house', ['type: rtu-over-tcp', 'host: 192.168.1.60', 'port: 502', 'unitId: 2']),
    );
    expectSingleError(parse(yaml), {
      path: 'devices[1].connection.type',
      line: 21,
      message: /^192\.168\.1\.60:502 is reached as 'tcp' by devices\[0\] \('inv'\), and as 'rtu-over-tcp' here$/,
      hint: /one TCP port speaks one framing/,
    });
  });

  it('a host is checked on rtu-over-tcp as on tcp', () => {
    expectSingleError(parse(withConnection(['type: rtu-over-tcp', 'host: 192.168.1.60:8899', 'port: 8899'])), {
      path: 'devices[0].connection.host',
      line: 15,
      message: /is not an IP address or host name/,
      hint: /write only '192\.168\.1\.60' here and put 8899 under 'port:'/,
    });
  });
});
