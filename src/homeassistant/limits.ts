/**
 * The site limits in Home Assistant (docs/home-assistant.md "Site limits"): an **Export limit**
 * number and a **Curtailed power** sensor on the gateway's own device. The number shows the export
 * limit in force (whatever its source: site.yaml, a schedule, the grid operator, a negative price);
 * a value sent to it is written as the limit schedule, through the schedule's own function and
 * checks (src/limits/schedule.ts, the same as PUT /api/v1/sites/{siteId}/limits): one slot from now
 * for the schedule's 7 days, replacing the schedule whole, its source `homeassistant`. The most
 * restrictive limit still holds, so a value above site.yaml's does not loosen it. Anything anyone
 * publishes on the command topic is refused with a reason, never thrown.
 */
import type { Database } from 'better-sqlite3';
import { LIMIT_HORIZON_MS, MAX_LIMIT_W, putLimitSchedule } from '../limits/schedule.js';
import type { SiteLimitsStatus } from '../limits/status.js';
import { formatInterval } from '../telemetry/interval.js';
import { configEntry, type DiscoveryContext, gatewayDeviceOf, gatewayIdentifier, HA_UNKNOWN } from './discovery.js';
import { HA_WRITER, RETAINED_REFUSAL, storeRefusal } from './mode-command.js';

/** What the feature needs of the site limits: their status now, and where the schedule is written. */
export interface HaLimits {
  /** undefined before the limits feature started */
  status: () => SiteLimitsStatus | undefined;
  db: Database;
  now: () => number;
}

export interface LimitTopics {
  exportLimit: string;
  exportLimitCommand: string;
  curtailed: string;
}

export const limitTopicsOf = (statePrefix: string): LimitTopics => ({
  exportLimit: `${statePrefix}/limits/export_limit`,
  exportLimitCommand: `${statePrefix}/limits/export_limit/set`,
  curtailed: `${statePrefix}/limits/curtailed_power`,
});

/** The number's and the sensor's discovery configs (number.mqtt.markdown, sensor.mqtt.markdown). */
export function limitsDiscovery(ctx: DiscoveryContext, t: LimitTopics): [string, string][] {
  const common = { availability: [{ topic: ctx.topics.status }], ...gatewayDeviceOf(ctx) };
  const uid = (x: string) => `${gatewayIdentifier(ctx.siteId)}_${x}`;
  return [
    configEntry(ctx, 'number', 'site_export_limit', 'export limit', {
      name: 'Export limit',
      unique_id: uid('site_export_limit'),
      icon: 'mdi:transmission-tower-export',
      entity_category: 'config',
      device_class: 'power',
      unit_of_measurement: 'W',
      min: 0,
      max: MAX_LIMIT_W,
      step: 1,
      mode: 'box',
      state_topic: t.exportLimit,
      command_topic: t.exportLimitCommand,
      retain: false,
      ...common,
    }),
    configEntry(ctx, 'sensor', 'site_curtailed_power', 'curtailed power', {
      name: 'Curtailed power',
      unique_id: uid('site_curtailed_power'),
      icon: 'mdi:solar-power-variant-outline',
      device_class: 'power',
      state_class: 'measurement',
      unit_of_measurement: 'W',
      state_topic: t.curtailed,
      ...common,
    }),
  ];
}

/** The states: the export limit in force (`None` without one) and the curtailed power. */
export function limitStates(s: SiteLimitsStatus, t: LimitTopics): [string, string][] {
  const exp = s.inForce.exportW;
  return [
    [t.exportLimit, exp ? String(exp.watts) : HA_UNKNOWN],
    [t.curtailed, String(s.curtailedW)],
  ];
}

export type ExportLimitAnswer = { ok: true; exportW: number } | { ok: false; code: string; message: string };

/** A plain decimal, as Home Assistant's number sends it ("1500", "1500.0"); nothing else. */
const DECIMAL = /^\d{1,9}(\.\d{1,6})?$/;

/** A value from the number: written as the schedule, with the schedule's checks. */
export function answerExportLimitCommand(limits: HaLimits, payload: Buffer, retained: boolean): ExportLimitAnswer {
  if (retained) return RETAINED_REFUSAL;
  const text = payload.toString('utf8').trim();
  // Number('') is 0 and Number('0x10') 16: only a decimal is a limit
  if (!DECIMAL.test(text))
    return { ok: false, code: 'SLOT_INVALID', message: `'${text.slice(0, 40)}' is not a number of watts` };
  const now = limits.now();
  const start = Math.floor(now / 1000) * 1000;
  try {
    putLimitSchedule(
      limits.db,
      [{ interval: formatInterval(start, start + LIMIT_HORIZON_MS), exportW: Number(text) }],
      HA_WRITER,
      now,
    );
  } catch (e) {
    return storeRefusal(e, 'limit');
  }
  return { ok: true, exportW: Number(text) };
}
