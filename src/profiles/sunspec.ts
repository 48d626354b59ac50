import type { DeviceConfig } from '../config/types.js';
import {
  type CounterScale,
  DEVICE_STATUSES,
  type DeviceCounters,
  type DeviceStatus,
  type GridState,
  type InstantValues,
  type Reading,
  type StatusValue,
  unknownStatus,
} from '../core/channels.js';
import type { DeviceRole } from '../core/device-role.js';
import type { DeviceIdentity } from '../core/identity.js';
import type { RegisterReader } from '../core/register-reader.js';
import { ownStreamId, ROLES, roleMeasures } from '../core/roles.js';
import { streamIds } from '../core/streams.js';
import { ModbusError } from '../modbus/errors.js';
import { type ModelValues, num, type PointValue } from '../modbus/sunspec/decode.js';
import { type DiscoveredModel, discoverSunSpec, readModel, type SunSpecMap } from '../modbus/sunspec/discovery.js';
import { blockLength, METER_EVT, MODELS } from '../modbus/sunspec/models.js';
import { CONN_BITS } from '../modbus/sunspec/models-controls.js';
import { DC_PORT, DER_701 } from '../modbus/sunspec/models-der.js';
import { sunspecCounterScale } from './counter-scale.js';
import type { DeviceDriver, DevicePoll } from './driver.js';
import { type KnownMeterSign, meterSignOf } from './sunspec-vendors.js';

/**
 * SunSpec devices by role: which models a role reads and how their points become spec channels
 * with docs/design.md's signs (positive = energy into the device). Layouts: src/modbus/sunspec/.
 *
 * Which model a role reads, from each list the first the device has:
 * - inverter: AC from 701, else 113/112/111, else 103/102/101 (the newest generation first);
 *   PV from 160's modules, else 714's PV ports; DC power from the AC model, else 714;
 * - battery: 802, else 124 (storage controls of a hybrid inverter); capacity from 802 `WHRtg`,
 *   else 120 `WHRtg` (nameplate, read once after discovery);
 * - meters: 203/204/202/201, else 213/214/212/211 (integer first: an acc32 counter with its scale
 *   factor keeps every Wh, a float32 counter above 16.7 MWh no longer does); the grid meter also
 *   reads 701 or 122 when the device has them, for the relay state.
 *
 * Signs assumed of the device (SunSpec Information Model Reference, DER models' "injected" /
 * "absorbed"):
 * - inverter 10x/11x `W`, `WH` and 701 `W`, `TotWhInj`: AC delivered (generator sign); 701
 *   `TotWhAbs`: AC absorbed; 10x/11x `DCW` and 714 `DCW` (all ports): DC power into the inverter;
 * - MPPT 160 module and 714 PV port `DCW`, `DCWH`/`DCWhInj`: produced by the string or optimiser;
 * - battery 802 `W`: the model leaves the sign to the vendor; discharge-positive is assumed
 *   (the generator sign of the inverter models). A battery reporting the other way needs a YAML
 *   profile of its own;
 * - storage 124 has no measured power: `InWRte`/`OutWRte` are the commanded charge/discharge
 *   rates (percent of `WChaMax`), not what flows, so a 124-only battery reports SoC (`ChaState`)
 *   and nothing else rather than a setpoint dressed as a measurement — unless the device's 160
 *   has the battery's charge and discharge modules (Fronius GEN24 Plus: 'StCha'/'StDisCha'), whose
 *   `DCW` and `DCWH` are measured: power = charge − discharge, lifetime in/out from their `DCWH`;
 * - meters 20x/21x `W`: positive = import into the site (or consumption, for a load meter),
 *   except where the vendor is documented to send + = export (sunspec-vendors.ts; site.yaml
 *   `meterSign` overrides); `TotWhImp`/`TotWhExp`: lifetime imported/exported.
 * Unimplemented points and counters that read 0 (acc) or NaN (float32) stay absent, never 0.
 *
 * Live channels (docs/design.md "Live channels"; SunSpec models repository json/model_<id>.json,
 * github.com/sunspec/models commit 0ab0d1d8c7283b771c9ca4ee8b37279ed46ed85f): inverter 10x/11x
 * `Hz`, `PhVphA..C`, `AphA..C`, `DCV`, `DCA`, `TmpSnk` else `TmpCab`, `St` (1 OFF … 8 STANDBY, 4 MPPT read as
 * `running`), 701 `Hz`, `TmpCab`; MPPT 160 module `DCV`, `DCA`; meters 20x/21x `Hz`, `PhVphA..C`,
 * `AphA..C`, `WphA..C` (the sign of `W`); battery 802 `V`, `A`, `State` (1 DISCONNECTED → off,
 * 2 INITIALIZING → starting, 3 CONNECTED → running, 4 STANDBY, 5 SOC PROTECTION → throttled,
 * 6 SUSPENDING → shutting_down, 99 FAULT), and the battery's temperature from the lithium-ion
 * bank 803 `ModTmpMax`, else the highest 804 `ModTmpMax` of its strings (802 has none; 803's
 * `ModTmpAvg` has no scale factor in the published model, and the hottest module is what a BMS
 * derates and alarms on: 802 `Evt1` OVER_TEMP_WARNING / ALARM); only their fixed blocks are read.
 * Currents are magnitudes: the power's sign tells the direction.
 */
const INVERTER_AC = [701, 113, 112, 111, 103, 102, 101] as const;
const BATTERY = [802, 124] as const;
/** where a SunSpec battery reports its temperature: the lithium-ion bank, else its strings (one 804 each) */
const BATTERY_TEMPERATURE = [803, 804] as const;
/** models whose fixed block sums up their repeating groups (803's strings, 804's modules), which are not read */
const FIXED_BLOCK_ONLY: ReadonlySet<number> = new Set(BATTERY_TEMPERATURE);
const METERS = [203, 204, 202, 201, 213, 214, 212, 211] as const;
/** models of an inverter at the connection point that say whether it is connected to the grid */
const CONNECTION_STATUS = [701, 122] as const;

interface RolePlan {
  /** read every poll: from each list, the first model the device has */
  poll: readonly (readonly number[])[];
  /** read once after discovery (static nameplate data) */
  once?: readonly number[];
  /** the device must have at least one of these, or it cannot play the role */
  needs: readonly number[];
  /** the role's readings from the models read */
  read: (poll: ModelPoll) => DevicePoll;
}

/** What one poll read of a device, for its role's `read`. */
interface ModelPoll {
  cfg: DeviceConfig;
  values: Values;
  /** every instance read of a model the device has several of (804, one per string) */
  all: ReadonlyMap<number, readonly ModelValues[]>;
  once: Values;
  ts: number;
  meterSign: KnownMeterSign;
}

const ROLE_MODELS: Record<DeviceRole, RolePlan> = {
  inverter: { poll: [INVERTER_AC, [160], [714]], needs: [...INVERTER_AC, 160, 714], read: inverterReadings },
  // 160 for hybrids that list the battery's DC flows as MPPT modules (Fronius GEN24 Plus)
  battery: { poll: [BATTERY, [160], BATTERY_TEMPERATURE], once: [120], needs: BATTERY, read: batteryReadings },
  'grid-meter': { poll: [METERS, CONNECTION_STATUS], needs: [...METERS, ...CONNECTION_STATUS], read: meterReadings },
  'consumption-meter': { poll: [METERS], needs: METERS, read: meterReadings },
};

export class SunSpecDevice implements DeviceDriver {
  private map: SunSpecMap | null = null;
  private once = new Map<number, ModelValues>();
  /** meters: the 20x/21x model of the chain this device reads */
  private meter: DiscoveredModel | undefined;
  identity: DeviceIdentity = {};

  constructor(readonly config: DeviceConfig) {}

  /** Forget the discovered map, e.g. after the device was replaced or rebooted with new firmware. */
  reset(): void {
    this.map = null;
  }

  async poll(reader: RegisterReader, now: () => number): Promise<DevicePoll> {
    const unit = this.config.connection.unitId;
    const plan = ROLE_MODELS[this.config.role];
    if (!this.map) {
      const map = await discoverSunSpec(reader, unit);
      if (!map.models.some((m) => plan.needs.includes(m.id))) {
        throw new ModbusError(
          'decode',
          `unit ${unit} has none of the SunSpec models a ${this.config.role} needs (${plan.needs.join(', ')}); it has ${map.models.map((m) => m.id).join(', ') || 'none'}`,
        );
      }
      const meter = isMeterRole(this.config.role) ? chosenMeter(map, this.config, unit) : undefined;
      // a meter in an inverter's chain (SolarEdge) has its own common model just before it
      const common = meter
        ? map.models.filter((m) => m.id === 1 && m.address < meter.address).at(-1)
        : map.models.find((m) => m.id === 1);
      if (common) {
        const c = (await readModel(reader, unit, common)).fixed;
        this.identity = { manufacturer: str(c.Mn), model: str(c.Md), serial: str(c.SN), version: str(c.Vr) };
      }
      this.once = new Map();
      for (const m of map.models.filter((x) => plan.once?.includes(x.id)))
        this.once.set(m.id, await readModel(reader, unit, m));
      this.map = map;
      this.meter = meter;
    }
    const values = new Map<number, ModelValues>();
    const all = new Map<number, ModelValues[]>();
    for (const alternatives of plan.poll) {
      const chosen = alternatives === METERS ? this.meter : preferred(this.map, alternatives);
      if (!chosen) continue;
      const instances = chosen.id === 804 ? this.map.models.filter((x) => x.id === 804) : [chosen];
      const read: ModelValues[] = [];
      for (const m of instances)
        read.push(await readModel(reader, unit, FIXED_BLOCK_ONLY.has(m.id) ? fixedBlock(m) : m));
      values.set(chosen.id, read[0]!);
      all.set(chosen.id, read);
    }
    const meterSign = meterSignOf(this.config.meterSign, this.identity.manufacturer);
    return plan.read({ cfg: this.config, values, all, once: this.once, ts: now(), meterSign });
  }
}

const isMeterRole = (role: DeviceRole) => ROLES[role].kind === 'meter';

/**
 * The meter model a meter device reads: with `sunspecMeter: n` the n-th meter of the chain
 * (SolarEdge puts up to three after the inverter, from 40121), else the preferred one.
 */
function chosenMeter(map: SunSpecMap, cfg: DeviceConfig, unit: number): DiscoveredModel | undefined {
  if (cfg.sunspecMeter === undefined) return preferred(map, METERS);
  const meters = map.models.filter((m) => (METERS as readonly number[]).includes(m.id));
  const m = meters[cfg.sunspecMeter - 1];
  if (!m)
    throw new ModbusError(
      'decode',
      `sunspecMeter: ${cfg.sunspecMeter}, but unit ${unit} has ${meters.length} meter model${meters.length === 1 ? '' : 's'} (${meters.map((x) => x.id).join(', ') || 'none'})`,
    );
  return m;
}

/** a model cut to its fixed block: the registers after it are not read */
function fixedBlock(m: DiscoveredModel): DiscoveredModel {
  const def = MODELS.get(m.id);
  return def ? { ...m, length: Math.min(m.length, blockLength(def.fixed)) } : m;
}

/** the device's model that comes first in `alternatives` (the list's order is the preference, not the chain's) */
function preferred(map: SunSpecMap, alternatives: readonly number[]) {
  for (const id of alternatives) {
    const m = map.models.find((x) => x.id === id);
    if (m) return m;
  }
  return undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function neg(v: number | undefined): number | undefined {
  return v === undefined ? undefined : v === 0 ? 0 : -v;
}

/** a percentage outside 0..100 is a device or decoding fault, not a state of charge */
function percent(v: PointValue): number | undefined {
  const n = num(v);
  return n !== undefined && n >= 0 && n <= 100 ? n : undefined;
}

/** SunSpec inverter `St` (models 101-103, 111-113): 1 OFF … 8 STANDBY, in order; 4 MPPT is `running`. */
function inverterStatus(v: PointValue): StatusValue | undefined {
  const n = num(v);
  if (n === undefined || !Number.isInteger(n)) return undefined;
  return n >= 1 && n <= 8 ? DEVICE_STATUSES[n - 1] : unknownStatus(n);
}

/** 802 `State`: a code the model does not enumerate is shown as it came */
function batteryStatus(v: PointValue): StatusValue | undefined {
  const n = num(v);
  if (n === undefined || !Number.isInteger(n)) return undefined;
  return BATTERY_STATE[n] ?? unknownStatus(n);
}

/** SunSpec battery 802 `State`. */
const BATTERY_STATE: Readonly<Record<number, DeviceStatus>> = {
  1: 'off',
  2: 'starting',
  3: 'running',
  4: 'standby',
  5: 'throttled',
  6: 'shutting_down',
  99: 'fault',
};

const abs = (v: number | undefined) => (v === undefined ? undefined : Math.abs(v) + 0);

/** Per-phase voltage and current of an AC model's fixed block (`PhVph*`, `Aph*`), and its power per phase (`Wph*`, with `sign`). */
function phaseValues(f: ModelValues['fixed'], sign: 1 | -1 = 1): InstantValues {
  const w = (x: PointValue) => {
    const n = num(x);
    return n === undefined ? undefined : sign * n + 0;
  };
  return {
    voltage_L1_V: num(f.PhVphA),
    voltage_L2_V: num(f.PhVphB),
    voltage_L3_V: num(f.PhVphC),
    current_L1_A: abs(num(f.AphA)),
    current_L2_A: abs(num(f.AphB)),
    current_L3_A: abs(num(f.AphC)),
    power_L1_W: w(f.WphA),
    power_L2_W: w(f.WphB),
    power_L3_W: w(f.WphC),
  };
}

function clean(values: InstantValues): InstantValues {
  const out: InstantValues = {};
  for (const [k, v] of Object.entries(values) as [keyof InstantValues, InstantValues[keyof InstantValues]][]) {
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** A counter point's value with its register's scale (profiles/counter-scale.ts). */
interface Counter {
  wh: number | undefined;
  scale?: CounterScale | undefined;
}

/** point `name` of a model's fixed block, or of one of its repeating blocks (`block`), as a counter */
function counterOf(m: ModelValues | undefined, name: string, block?: Record<string, PointValue>): Counter {
  if (!m) return { wh: undefined };
  const wh = num((block ?? m.fixed)[name]);
  return { wh, scale: sunspecCounterScale(m.id, name, m.fixed, wh) };
}

/** lifetime counters as the device reports them; a negative one is a device fault and stays absent */
function counters(inC: Counter | undefined, outC: Counter | undefined): DeviceCounters | undefined {
  const ok = (v: number | undefined) => (v !== undefined && v >= 0 ? v : undefined);
  const i = ok(inC?.wh);
  const o = ok(outC?.wh);
  if (i === undefined && o === undefined) return undefined;
  return {
    ...(i !== undefined ? { inWh: i, ...(inC?.scale ? { inScale: inC.scale } : {}) } : {}),
    ...(o !== undefined ? { outWh: o, ...(outC?.scale ? { outScale: outC.scale } : {}) } : {}),
  };
}

function first(values: ReadonlyMap<number, ModelValues>, ids: readonly number[]): ModelValues | undefined {
  for (const id of ids) {
    const v = values.get(id);
    if (v) return v;
  }
  return undefined;
}

type Values = ReadonlyMap<number, ModelValues>;

function inverterReadings({ cfg, values, ts }: ModelPoll): DevicePoll {
  const id = cfg.id;
  const readings: Reading[] = [];
  const dc = values.get(714)?.fixed;
  const ac = first(values, INVERTER_AC);
  if (ac) {
    const f = ac.fixed;
    const der = ac.id === 701;
    readings.push({
      streamId: ownStreamId(cfg.role, id),
      ts,
      values: clean({
        power_AC_W: neg(num(f.W)),
        power_DC_W: (der ? undefined : num(f.DCW)) ?? num(dc?.DCW),
        frequency_Hz: num(f.Hz),
        // the heat sink where the device has it (SolarEdge reports only it), else the cabinet
        temperature_C: num(f.TmpSnk) ?? num(f.TmpCab),
        // 701 has other layouts for phases and another `St` (0 off, 1 on): only frequency and temperature
        ...(der
          ? {}
          : {
              ...phaseValues(f),
              voltage_DC_V: num(f.DCV),
              current_DC_A: abs(num(f.DCA)),
              status: inverterStatus(f.St),
            }),
      }),
      // 10x/11x WH counts only AC delivered; the absorbed direction is integrated from power
      counters: der
        ? counters(counterOf(ac, 'TotWhAbs'), counterOf(ac, 'TotWhInj'))
        : counters(undefined, counterOf(ac, 'WH')),
    });
  }
  const modules = pvModules(values);
  if (!modules) return { readings };
  modules.forEach((m, i) => {
    readings.push({
      streamId: streamIds.pvModule(id, i + 1),
      ts,
      values: clean({ power_W: neg(m.w), voltage_DC_V: m.v, current_DC_A: abs(m.a) }),
      counters: counters(undefined, m.wh),
    });
  });
  if (modules.length > 0) {
    const sum = (xs: (number | undefined)[]) =>
      xs.every((x) => x !== undefined) ? xs.reduce<number>((a, b) => a + b!, 0) : undefined;
    const w = sum(modules.map((m) => m.w));
    const wh = sum(modules.map((m) => m.wh.wh));
    // one module wrapping drops the sum by its wrap point; the sum moves in the modules' steps added up
    const scale = modules[0]!.wh.scale;
    const sumScale = scale && { wrapWh: scale.wrapWh, stepWh: scale.stepWh * modules.length };
    readings.push({
      streamId: streamIds.pvAggregate(id),
      ts,
      values: clean({ power_W: neg(w) }),
      counters: counters(undefined, { wh, scale: sumScale }),
    });
  }
  return { readings, pvModules: modules.length };
}

interface DcModule {
  w: number | undefined;
  wh: Counter;
  /** the string's voltage and current, where the model has them (160) */
  v?: number | undefined;
  a?: number | undefined;
}

/**
 * A Fronius GEN24 Plus lists its battery's DC flows as two more 160 modules, IDStr 'StCha 3'
 * (charging) and 'StDisCha 4' (discharging) after 'MPPT 1' and 'MPPT 2' (Fronius' SunSpec map;
 * evcc's fronius-gen24 template reads them as the battery). They are not PV strings.
 */
const STORAGE_MODULE = { charge: /^StCha\b/, discharge: /^StDisCha\b/ } as const;
type StoragePath = keyof typeof STORAGE_MODULE;

/** Whether a 160's modules carry a battery's flows (the GEN24 Plus' StCha / StDisCha): `sitegw scan` offers that battery. */
export function hasStorageModules(mppt: ModelValues | undefined): boolean {
  return (mppt?.repeating ?? []).some((m) => storagePath(m) !== undefined);
}

/** the battery path a 160 module's IDStr names, if it names one */
function storagePath(m: ModelValues['repeating'][number]): StoragePath | undefined {
  const id = str(m.IDStr)?.trim() ?? '';
  return (Object.keys(STORAGE_MODULE) as StoragePath[]).find((k) => STORAGE_MODULE[k].test(id));
}

function storageModule(values: Values, which: StoragePath): DcModule | undefined {
  const m = values.get(160)?.repeating.find((x) => storagePath(x) === which);
  return m ? { w: num(m.DCW), wh: counterOf(values.get(160), 'DCWH', m) } : undefined;
}

/** PV strings or optimisers: 160's modules but the battery's, else 714's ports of type PV (battery and other ports are not PV) */
function pvModules(values: Values): DcModule[] | undefined {
  const mppt = values.get(160);
  if (mppt)
    return mppt.repeating
      .filter((m) => storagePath(m) === undefined)
      .map((m) => ({ w: num(m.DCW), wh: counterOf(mppt, 'DCWH', m), v: num(m.DCV), a: num(m.DCA) }));
  const dc = values.get(714);
  return dc?.repeating
    .filter((p) => num(p.PrtTyp) === DC_PORT.PV)
    .map((p) => ({ w: num(p.DCW), wh: counterOf(dc, 'DCWhInj', p) }));
}

/** 803's hottest module, else the hottest of the strings' 804s */
function batteryTemperature(values: Values, all: ModelPoll['all']): number | undefined {
  const bank = num(values.get(803)?.fixed.ModTmpMax);
  if (bank !== undefined) return bank;
  const strings = (all.get(804) ?? []).map((m) => num(m.fixed.ModTmpMax)).filter((t): t is number => t !== undefined);
  return strings.length > 0 ? Math.max(...strings) : undefined;
}

function batteryReadings({ cfg, values, all, once, ts }: ModelPoll): DevicePoll {
  const nameplateWh = num(once.get(120)?.fixed.WHRtg);
  const b = values.get(802)?.fixed;
  const storage = values.get(124)?.fixed;
  const capacityWh = num(b?.WHRtg) ?? nameplateWh;
  // without 802, a hybrid's 160 storage modules are measured DC flows: charge in, discharge out
  const charge = b ? undefined : storageModule(values, 'charge');
  const discharge = b ? undefined : storageModule(values, 'discharge');
  const dcPower = charge?.w !== undefined && discharge?.w !== undefined ? charge.w - discharge.w : undefined;
  const readingValues = b
    ? clean({
        power_W: neg(num(b.W)),
        soc: percent(b.SoC),
        soh: percent(b.SoH),
        voltage_DC_V: num(b.V),
        current_DC_A: abs(num(b.A)),
        status: batteryStatus(b.State),
        temperature_C: batteryTemperature(values, all),
      })
    : clean({ power_W: dcPower, soc: percent(storage?.ChaState), temperature_C: batteryTemperature(values, all) });
  return {
    readings: [
      {
        streamId: ownStreamId(cfg.role, cfg.id),
        ts,
        values: readingValues,
        counters: counters(charge?.wh, discharge?.wh),
      },
    ],
    ...(capacityWh !== undefined && capacityWh > 0 ? { capacityWh } : {}),
  };
}

/** Relay state from a meter: a power-failure event, or no voltage on any phase. */
export function gridStateOf(m: ModelValues['fixed']): GridState {
  const evt = num(m.Evt);
  if (evt !== undefined && (evt & METER_EVT.POWER_FAILURE) !== 0) return 'not_present';
  const volts = [m.PhVphA, m.PhVphB, m.PhVphC, m.PhV].map(num).filter((v): v is number => v !== undefined);
  if (volts.length > 0 && volts.every((v) => v < 50)) return 'not_present';
  return 'ok';
}

/**
 * What an inverter at the connection point says about the grid, or undefined when it cannot
 * tell. 701: grid-forming (islanded, backup) or running while disconnected → not_present;
 * connected → ok. 122: ECPConn connected → ok; disconnected while the PV or storage side is
 * operating → not_present. An inverter that is off or asleep and disconnected tells nothing: at
 * night a PV inverter drops its relay with the grid still there.
 */
export function inverterGridState(values: Values): GridState | undefined {
  const der = values.get(701)?.fixed;
  if (der) {
    const mode = num(der.DERMode);
    if (mode !== undefined && (mode & DER_701.MODE_GRID_FORMING) !== 0) return 'not_present';
    const conn = num(der.ConnSt);
    if (conn === DER_701.CONN_CONNECTED) return 'ok';
    if (conn === DER_701.CONN_DISCONNECTED && num(der.St) === DER_701.ST_ON) return 'not_present';
  }
  const status = values.get(122)?.fixed;
  if (status) {
    const ecp = num(status.ECPConn);
    const operating = [status.PVConn, status.StorConn].some((v) => ((num(v) ?? 0) & CONN_BITS.OPERATING) !== 0);
    if (ecp !== undefined && (ecp & CONN_BITS.CONNECTED) !== 0) return 'ok';
    if (ecp !== undefined && operating) return 'not_present';
  }
  return undefined;
}

/** Meter and inverter views combined: a loss seen by either wins (a meter on the backup side sees the inverter's voltage). */
function connectionState(meter: ModelValues['fixed'] | undefined, values: Values): GridState {
  const views = [meter ? gridStateOf(meter) : undefined, inverterGridState(values)];
  if (views.includes('not_present')) return 'not_present';
  return views.includes('ok') ? 'ok' : 'unknown';
}

/** A meter's one stream: power and its import/export counters, plus the relay state at the grid. */
function meterReadings({ cfg, values, ts, meterSign: sign }: ModelPoll): DevicePoll {
  const streamId = ownStreamId(cfg.role, cfg.id);
  const withState = roleMeasures(cfg.role, 'state');
  const model = first(values, METERS);
  const m = model?.fixed;
  const w = num(m?.W);
  return {
    readings: [
      {
        streamId,
        ts,
        values: clean({
          power_W: sign === 'export-positive' ? neg(w) : w,
          ...(withState ? { state: connectionState(m, values) } : {}),
          ...(m ? { frequency_Hz: num(m.Hz), ...phaseValues(m, sign === 'export-positive' ? -1 : 1) } : {}),
        }),
        counters: m ? counters(counterOf(model, 'TotWhImp'), counterOf(model, 'TotWhExp')) : undefined,
      },
    ],
  };
}
