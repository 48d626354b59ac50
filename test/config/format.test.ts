import { describe, expect, it } from 'vitest';
import { formatPath } from '../../src/yaml/errors.js';
import { formatConfigErrors } from '../../src/yaml/format.js';
import { closest, editDistance } from '../../src/yaml/suggest.js';

describe('formatConfigErrors', () => {
  it('writes file:line:col path: message — hint', () => {
    expect(
      formatConfigErrors(
        [
          {
            path: 'devices[1].connection.port',
            line: 12,
            column: 7,
            message: 'must be at most 65535, got 70000',
            hint: "use the device's Modbus TCP port, usually 502",
          },
          { path: '', line: 1, column: 1, message: 'site.yaml is empty' },
          { path: 'site', message: 'something without a place' },
        ],
        'site.yaml',
      ),
    ).toEqual([
      "site.yaml:12:7 devices[1].connection.port: must be at most 65535, got 70000 — use the device's Modbus TCP port, usually 502",
      'site.yaml:1:1 site.yaml is empty',
      'site.yaml site: something without a place',
    ]);
  });
});

describe('formatPath', () => {
  it('uses dots for keys and brackets for indices and odd keys', () => {
    expect(formatPath(['devices', 1, 'connection', 'port'])).toBe('devices[1].connection.port');
    expect(formatPath(['site', 'my key'])).toBe('site["my key"]');
    expect(formatPath([])).toBe('');
  });
});

describe('suggestions', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('prot', 'port')).toBe(1);
    expect(editDistance('host', 'host')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests only plausible typos', () => {
    expect(closest('prot', ['type', 'host', 'port'])).toBe('port');
    expect(closest('unitid', ['unitId', 'port'])).toBe('unitId');
    expect(closest('timeout', ['timeoutMs', 'host'])).toBe('timeoutMs');
    expect(closest('colour', ['site', 'http', 'devices'])).toBeUndefined();
  });
});
