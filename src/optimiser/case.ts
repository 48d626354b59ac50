/**
 * One optimiser case (docs/optimiser.md "The problem"): prices, forecasts, the battery and the grid
 * connection for a run of equal slots. The TypeBox schema is the one definition: it validates what
 * `sitegw optimise --input` reads and gives the type the solver takes. What a schema cannot say
 * (equal lengths, socMin ≤ socInitial ≤ socMax) is checked after it, with the same kind of message.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const Num = (o: { minimum?: number; maximum?: number; exclusiveMinimum?: number } = {}) => Type.Number(o);
const Percent = Num({ minimum: 0, maximum: 100 });
const Watts = Num({ minimum: 0, maximum: 1e7 });
/** a price may have any sign (negative day-ahead hours), but not an absurd size */
const Price = Num({ minimum: -1000, maximum: 1000 });
/** 7 days of 15-minute slots: the plan API's horizon (docs/design.md "Control: operation mode and plans") */
export const MAX_SLOTS = 672;
const SlotLimits = Type.Array(Type.Union([Watts, Type.Null()]), { minItems: 1, maxItems: MAX_SLOTS });

export const OptimiserCase = Type.Object(
  {
    start: Type.String({ maxLength: 40 }),
    slotMinutes: Type.Integer({ minimum: 1, maximum: 60 }),
    importPrice: Type.Array(Price, { minItems: 1, maxItems: MAX_SLOTS }),
    exportPrice: Type.Array(Price, { minItems: 1, maxItems: MAX_SLOTS }),
    pvW: Type.Array(Watts, { minItems: 1, maxItems: MAX_SLOTS }),
    loadW: Type.Array(Watts, { minItems: 1, maxItems: MAX_SLOTS }),
    battery: Type.Object(
      {
        capacityWh: Num({ exclusiveMinimum: 0, maximum: 1e7 }),
        socInitial: Percent,
        socMin: Percent,
        socMax: Percent,
        socFinalMin: Percent,
        maxChargeW: Watts,
        maxDischargeW: Watts,
        chargeEfficiency: Num({ exclusiveMinimum: 0, maximum: 1 }),
        dischargeEfficiency: Num({ exclusiveMinimum: 0, maximum: 1 }),
        cycleCostPerKWh: Num({ minimum: 0, maximum: 1000 }),
      },
      { additionalProperties: false },
    ),
    grid: Type.Object(
      {
        maxImportW: Watts,
        maxExportW: Watts,
        gridCharge: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    /** the site's limits per slot (docs/optimiser.md "Limits and curtailment"); null: none in that slot */
    limits: Type.Optional(
      Type.Object(
        {
          exportW: Type.Optional(SlotLimits),
          importW: Type.Optional(SlotLimits),
          generationW: Type.Optional(SlotLimits),
          /** site.yaml limits.negativeExportPrice: `ignore` exports at a negative price, so curtailing saves nothing */
          negativeExportPrice: Type.Optional(Type.Union([Type.Literal('curtail'), Type.Literal('ignore')])),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type OptimiserCase = Static<typeof OptimiserCase>;

/** A case that is malformed (schema, lengths, SoC order): the input's fault, said in one line. */
export class InvalidCaseError extends Error {
  readonly code = 'INVALID_CASE';
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** The case, or an InvalidCaseError naming the first thing wrong with it (JSON path and rule). */
export function parseCase(data: unknown): OptimiserCase {
  if (!Value.Check(OptimiserCase, data)) {
    const first = Value.Errors(OptimiserCase, data).First();
    const where = first?.path ? first.path : '(the case)';
    throw new InvalidCaseError(`${where}: ${first?.message ?? 'does not match the case schema'}`);
  }
  // TypeBox checks `format` only where a format is registered; the solver needs a real instant
  if (!ISO_UTC.test(data.start) || Number.isNaN(Date.parse(data.start))) {
    throw new InvalidCaseError(`/start: '${data.start}' is not an ISO 8601 date-time with a zone`);
  }
  const n = data.importPrice.length;
  for (const key of ['exportPrice', 'pvW', 'loadW'] as const) {
    if (data[key].length !== n) {
      throw new InvalidCaseError(`/${key}: ${data[key].length} values, but importPrice has ${n} (one per slot)`);
    }
  }
  for (const key of ['exportW', 'importW', 'generationW'] as const) {
    const v = data.limits?.[key];
    if (v && v.length !== n) {
      throw new InvalidCaseError(`/limits/${key}: ${v.length} values, but importPrice has ${n} (one per slot)`);
    }
  }
  const b = data.battery;
  if (b.socMin > b.socMax) throw new InvalidCaseError(`/battery: socMin ${b.socMin} is above socMax ${b.socMax}`);
  if (b.socInitial < b.socMin || b.socInitial > b.socMax) {
    throw new InvalidCaseError(
      `/battery/socInitial: ${b.socInitial} is outside socMin..socMax (${b.socMin}..${b.socMax})`,
    );
  }
  return data;
}
