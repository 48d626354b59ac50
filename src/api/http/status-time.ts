/**
 * Times on the status page: always in the site's timezone (site.timezone) with a 24-hour clock
 * and the zone's short name, never the browser's zone or locale and never a UTC 'Z' stamp
 * (issue 45). The server renders with these; /status.js formats the same way (STATUS_JS).
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timezone: string): Intl.DateTimeFormat {
  let f = formats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formats.set(timezone, f);
  }
  return f;
}

/** The parts of an instant in the site's zone: date 'YYYY-MM-DD', time 'HH:MM:SS', zone 'CEST'. */
export function siteParts(t: string | number, timezone: string): { date: string; time: string; zone: string } {
  const p: Record<string, string> = {};
  for (const x of format(timezone).formatToParts(new Date(t))) p[x.type] = x.value;
  return {
    date: `${p.year}-${p.month}-${p.day}`,
    time: `${p.hour}:${p.minute}:${p.second}`,
    zone: p.timeZoneName ?? '',
  };
}

/** '2026-10-25 02:30:00 CET' */
export function siteDateTime(t: string | number, timezone: string): string {
  const p = siteParts(t, timezone);
  return `${p.date} ${p.time} ${p.zone}`;
}

/** '02:30 CET' */
export function siteHourMinute(t: string | number, timezone: string): string {
  const p = siteParts(t, timezone);
  return `${p.time.slice(0, 5)} ${p.zone}`;
}
