/**
 * The rule of `tariff:` that the schema cannot express: time-of-use periods cover every quarter
 * hour of the week exactly once. A gap would leave buckets unpriced and an overlap would make
 * the price depend on the order of the list; both are mistakes an installer wants to hear about.
 */

import type { Finding } from '../yaml/messages.js';
import { isRec } from '../yaml/parse.js';
import { WEEKDAYS } from './schema-tariff.js';
import { describeSlot, type PeriodShape, SLOTS_PER_WEEK, weekTable } from './tou.js';
import type { Weekday } from './types.js';

const FROM = /^(?:[01][0-9]|2[0-3]):(?:00|15|30|45)$/;
const TO = /^(?:(?:[01][0-9]|2[0-3]):(?:00|15|30|45)|24:00)$/;

/** The period as the table needs it, or undefined when the schema reports its shape anyway. */
function shapeOf(p: unknown): PeriodShape | undefined {
  if (!isRec(p) || typeof p.from !== 'string' || typeof p.to !== 'string' || !FROM.test(p.from) || !TO.test(p.to))
    return undefined;
  if (p.days === undefined) return { from: p.from, to: p.to };
  if (
    !Array.isArray(p.days) ||
    p.days.length === 0 ||
    !p.days.every((d) => (WEEKDAYS as readonly unknown[]).includes(d))
  )
    return undefined;
  return { from: p.from, to: p.to, days: p.days as Weekday[] };
}

export function tariffFindings(tariff: unknown, out: Finding[]): void {
  if (!isRec(tariff) || tariff.type !== 'time-of-use' || !Array.isArray(tariff.periods)) return;
  const shapes = tariff.periods.map(shapeOf);
  // with a malformed period the coverage would be reported wrongly; the schema names it first
  if (shapes.some((s) => s === undefined)) return;
  const table = weekTable(shapes as PeriodShape[]);
  const at = (i: number) => ['tariff', 'periods', i];
  for (const i of table.empty) {
    out.push({
      segments: [...at(i), 'to'],
      anchor: [...at(i), 'to'],
      message: 'is the same time as from: the period is empty',
      hint: "for a whole day write from: '00:00' and to: '24:00'",
    });
  }
  for (const o of table.overlaps) {
    out.push({
      segments: at(o.later),
      anchor: at(o.later),
      message: `overlaps periods[${o.earlier}] (both apply on ${describeSlot(o.slot)})`,
      hint: 'every quarter hour of the week takes its price from one period: change from, to or days so the periods do not overlap',
    });
  }
  const gap = table.slots.indexOf(-1);
  if (gap >= 0) {
    let end = gap;
    while (end < SLOTS_PER_WEEK && table.slots[end] === -1) end++;
    const until = end < SLOTS_PER_WEEK ? ` to ${describeSlot(end)}` : ' to the end of sun';
    out.push({
      segments: ['tariff', 'periods'],
      anchor: ['tariff', 'periods'],
      message: `no period covers ${describeSlot(gap)}${until}`,
      hint: 'periods together must cover every quarter hour of the week: add a period for that time, or widen a neighbouring one',
    });
  }
}
