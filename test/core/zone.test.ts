import { describe, expect, it } from 'vitest';
import { isIanaZone } from '../../src/core/zone.js';

// the same answers on every runtime: Node 24's Intl takes the offsets as zones, Node 20's does not
describe('isIanaZone', () => {
  it.each(['Europe/Berlin', 'America/New_York', 'UTC', 'Etc/GMT+1'])('%s is a zone', (tz) => {
    expect(isIanaZone(tz)).toBe(true);
  });
  it.each(['+01:00', '-0500', '+01', 'Mars/Olympus', ''])('"%s" is not', (tz) => {
    expect(isIanaZone(tz)).toBe(false);
  });
});
