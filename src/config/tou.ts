/**
 * Time-of-use periods as a table of the week's 672 quarter hours (local wall time), shared by
 * the config check (every quarter hour covered once) and the savings price lookup.
 */

import { WEEKDAYS } from './schema-tariff.js';
import type { TouPeriod, Weekday } from './types.js';

export const SLOTS_PER_DAY = 96;
export const SLOTS_PER_WEEK = 7 * SLOTS_PER_DAY;

/** What the table needs of a period; the config check hands it raw values it has checked. */
export type PeriodShape = Pick<TouPeriod, 'from' | 'to'> & { days?: readonly Weekday[] };

export interface WeekTable {
  /** period index per quarter hour of the week (Monday 00:00 first), -1 where none applies */
  slots: Int16Array;
  /** the first slot each later period shares with an earlier one */
  overlaps: { earlier: number; later: number; slot: number }[];
  /** periods whose from equals their to */
  empty: number[];
}

/** 'HH:MM' → quarter hours since midnight. */
export function slotOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return h * 4 + m / 15;
}

export function weekTable(periods: readonly PeriodShape[]): WeekTable {
  const slots = new Int16Array(SLOTS_PER_WEEK).fill(-1);
  const overlaps: WeekTable['overlaps'] = [];
  const empty: number[] = [];
  periods.forEach((p, i) => {
    const from = slotOf(p.from);
    const to = slotOf(p.to);
    if (from === to) {
      empty.push(i);
      return;
    }
    // a period whose end comes before its start runs into the next day
    const length = to > from ? to - from : SLOTS_PER_DAY - from + to;
    let overlapped = false;
    for (const day of p.days ?? WEEKDAYS) {
      const first = WEEKDAYS.indexOf(day) * SLOTS_PER_DAY + from;
      for (let k = 0; k < length; k++) {
        const s = (first + k) % SLOTS_PER_WEEK;
        const owner = slots[s]!;
        if (owner === -1) slots[s] = i;
        else if (!overlapped) {
          overlaps.push({ earlier: owner, later: i, slot: s });
          overlapped = true;
        }
      }
    }
  });
  return { slots, overlaps, empty };
}

/** 'tue 07:15' for a slot of the week. */
export function describeSlot(slot: number): string {
  const day = WEEKDAYS[Math.floor(slot / SLOTS_PER_DAY)]!;
  const q = slot % SLOTS_PER_DAY;
  return `${day} ${String(Math.floor(q / 4)).padStart(2, '0')}:${String((q % 4) * 15).padStart(2, '0')}`;
}
