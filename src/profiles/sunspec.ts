import type { DeviceCounters, GridState, InstantValues, Reading } from '../core/channels.js';
import type { DeviceConfig } from '../config/types.js';
import { ModbusError } from '../modbus/errors.js';
import type { RegisterReader } from '../modbus/register-reader.js';
import { num, type ModelValues } from '../modbus/sunspec/decode.js';
import { discoverSunSpec, readModel, type SunSpecMap } from '../modbus/sunspec/discovery.js';
import { METER_EVT } from '../modbus/sunspec/models.js';
import { streamIds } from '../site/stream-ids.js';
import type { DeviceDriver, DeviceIdentity, DevicePoll } from './driver.js';

/**
 * SunSpec devices by role: which models a role needs and how their points become spec channels
 * with design.md's signs (positive = energy into the device).
 *
 * Sign conventions assumed of the device (SunSpec Information Model Reference):
 * - inverter 101-103 `W` and `WH`: AC power/energy delivered by the inverter (generator sign),
 *   `DCW`: DC power into the inverter;
 * - MPPT 160 module `DCW`/`DCWH`: power/energy produced by the string or optimiser;
 * - battery 802 `W`: the model leaves the sign to the vendor; discharge-positive is assumed
 *   (the generator sign of the inverter models). A battery reporting the other way needs a
 *   profile of its own (device layer issue);
 * - meters 201-204 `W`: positive = import into the site (or consumption, for a load meter);
 *   `TotWhImp`/`TotWhExp`: lifetime imported/exported.
 */
const ROLE_MODELS: Record<DeviceConfig['role'], readonly number[][]> = {
  // each inner list: alternatives, the first present is read
  inverter: [[103, 102, 101], [160]],
  battery: [[802]],
  'grid-meter': [[203, 204, 202, 201]],
  'consumption-meter': [[203, 204, 202, 201]],
};

export class SunSpecDevice implements DeviceDriver {
  private map: SunSpecMap | null = null;
  identity: DeviceIdentity = {};

  constructor(readonly config: DeviceConfig) {}

  /** Forget the discovered map, e.g. after the device was replaced or rebooted with new firmware. */
  reset(): void {
    this.map = null;
  }

  async poll(reader: RegisterReader, now: () => number): Promise<DevicePoll> {
    const unit = this.config.connection.unitId;
    if (!this.map) {
      const map = await discoverSunSpec(reader, unit);
      const common = map.models.find((m) => m.id === 1);
      if (common) {
        const c = (await readModel(reader, unit, common)).fixed;
        this.identity = { manufacturer: str(c.Mn), model: str(c.Md), serial: str(c.SN), version: str(c.Vr) };
      }
      this.map = map;
    }
    const values = new Map<number, ModelValues>();
    for (const alternatives of ROLE_MODELS[this.config.role]) {
      const m = this.map.models.find((x) => alternatives.includes(x.id));
      if (!m) continue;
      values.set(m.id, await readModel(reader, unit, m));
    }
    if (values.size === 0) {
      throw new ModbusError('decode', `unit ${unit} has none of the SunSpec models a ${this.config.role} needs (${ROLE_MODELS[this.config.role].flat().join(', ')})`);
    }
    return toReadings(this.config, values, now());
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function neg(v: number | undefined): number | undefined {
  return v === undefined ? undefined : v === 0 ? 0 : -v;
}

function clean(values: InstantValues): InstantValues {
  const out: InstantValues = {};
  for (const [k, v] of Object.entries(values) as [keyof InstantValues, InstantValues[keyof InstantValues]][]) {
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

function counters(inWh: number | undefined, outWh: number | undefined): DeviceCounters | undefined {
  if (inWh === undefined && outWh === undefined) return undefined;
  return { ...(inWh !== undefined ? { inWh } : {}), ...(outWh !== undefined ? { outWh } : {}) };
}

function first(values: Map<number, ModelValues>, ids: readonly number[]): ModelValues | undefined {
  for (const id of ids) {
    const v = values.get(id);
    if (v) return v;
  }
  return undefined;
}

function toReadings(cfg: DeviceConfig, values: Map<number, ModelValues>, ts: number): DevicePoll {
  switch (cfg.role) {
    case 'inverter':
      return inverterReadings(cfg.id, values, ts);
    case 'battery':
      return batteryReadings(cfg.id, values, ts);
    case 'grid-meter':
      return meterReadings(streamIds.gridMeter(cfg.id), true, values, ts);
    case 'consumption-meter':
      return meterReadings(streamIds.consumptionMeter(cfg.id), false, values, ts);
  }
}

function inverterReadings(id: string, values: Map<number, ModelValues>, ts: number): DevicePoll {
  const readings: Reading[] = [];
  const inv = first(values, [103, 102, 101]);
  if (inv) {
    const f = inv.fixed;
    readings.push({
      streamId: streamIds.inverter(id),
      ts,
      values: clean({ power_AC_W: neg(num(f.W)), power_DC_W: num(f.DCW) }),
      // WH counts only AC delivered; the AC absorbed direction is integrated from power
      counters: counters(undefined, num(f.WH)),
    });
  }
  const mppt = values.get(160);
  let pvModules: number | undefined;
  if (mppt) {
    pvModules = mppt.repeating.length;
    let sumW = 0;
    let sumWh = 0;
    let allW = true;
    let allWh = true;
    mppt.repeating.forEach((m, i) => {
      const w = num(m.DCW);
      const wh = num(m.DCWH);
      if (w === undefined) allW = false;
      else sumW += w;
      if (wh === undefined) allWh = false;
      else sumWh += wh;
      readings.push({
        streamId: streamIds.pvModule(id, i + 1),
        ts,
        values: clean({ power_W: neg(w) }),
        counters: counters(undefined, wh),
      });
    });
    if (mppt.repeating.length > 0) {
      readings.push({
        streamId: streamIds.pvAggregate(id),
        ts,
        values: allW ? { power_W: neg(sumW) } : {},
        counters: allWh ? { outWh: sumWh } : undefined,
      });
    }
  }
  return { readings, ...(pvModules !== undefined ? { pvModules } : {}) };
}

function batteryReadings(id: string, values: Map<number, ModelValues>, ts: number): DevicePoll {
  const b = values.get(802)!.fixed;
  const capacityWh = num(b.WHRtg);
  return {
    readings: [
      {
        streamId: streamIds.batteryBlock(id),
        ts,
        values: clean({ power_W: neg(num(b.W)), soc: num(b.SoC), soh: num(b.SoH) }),
      },
    ],
    ...(capacityWh !== undefined ? { capacityWh } : {}),
  };
}

function meterValues(values: Map<number, ModelValues>) {
  return first(values, [203, 204, 202, 201])!.fixed;
}

/** Relay state from the grid-side meter: a power-failure event, or no voltage on any phase. */
export function gridStateOf(m: ModelValues['fixed']): GridState {
  const evt = num(m.Evt);
  if (evt !== undefined && (evt & METER_EVT.POWER_FAILURE) !== 0) return 'not_present';
  const volts = [m.PhVphA, m.PhVphB, m.PhVphC, m.PhV].map(num).filter((v): v is number => v !== undefined);
  if (volts.length > 0 && volts.every((v) => v < 50)) return 'not_present';
  return 'ok';
}

/** A meter's one stream: power and its import/export counters, plus the relay state at the grid. */
function meterReadings(streamId: string, withState: boolean, values: Map<number, ModelValues>, ts: number): DevicePoll {
  const m = meterValues(values);
  return {
    readings: [
      {
        streamId,
        ts,
        values: clean({ power_W: num(m.W), ...(withState ? { state: gridStateOf(m) } : {}) }),
        counters: counters(num(m.TotWhImp), num(m.TotWhExp)),
      },
    ],
  };
}
