import { IANAZone } from 'luxon';

/**
 * An IANA time zone name (Region/City, UTC), the zone whose DST rules buckets and tariffs follow.
 * Node 24's Intl (ECMA-402 offset time zones) also takes a bare UTC offset such as "+01:00" or
 * "-0500" as a zone, which Node 20's refuses: the offset never changes with DST, so it is refused
 * here on every runtime.
 */
export function isIanaZone(tz: string): boolean {
  return !/^[+-]/.test(tz) && IANAZone.isValidZone(tz);
}
