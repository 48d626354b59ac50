/**
 * site.yaml `control:`: whether the gateway may command the site's storage, and the safety
 * envelope every command is clipped to (docs/control.md, docs/design.md "Control: operation mode
 * and plans"). Off by default: a real site is commanded only after an installer has checked the
 * limits below against the installation (docs/control.md "Before enabling control").
 */
import type { SchemaNode } from '../yaml/schema.js';

const watts = (description: string, dflt: number, max: number) =>
  ({
    type: 'integer',
    description,
    default: dflt,
    minimum: 0,
    maximum: max,
    hint: `use whole watts between 0 and ${max}; 0 means none allowed`,
  }) as const satisfies SchemaNode;
const percent = (description: string, dflt: number) =>
  ({
    type: 'integer',
    description,
    default: dflt,
    minimum: 0,
    maximum: 100,
    hint: `use a whole percent between 0 and 100, usually ${dflt}`,
  }) as const satisfies SchemaNode;

/** No register the gateway reads tells the losses: the installer gives them, or the optimiser assumes 0.95. */
const efficiency = (way: string, what: string) =>
  ({
    type: 'number',
    description: `the optimiser's ${way} efficiency: ${what} (docs/optimiser.md "The daemon's loop")`,
    default: 0.95,
    minimum: 0.5,
    maximum: 1,
    hint: `give a fraction between 0.5 and 1, e.g. 0.95; a datasheet's round-trip efficiency is charge × discharge (0.9 round trip: about 0.95 each)`,
  }) as const satisfies SchemaNode;

export const CONTROL = {
  type: 'object',
  description: 'battery control: operation mode, plans and the safety envelope every command is clipped to',
  default: {},
  additionalProperties: false,
  properties: {
    enabled: {
      type: 'boolean',
      description:
        'allow the gateway to write to the storage system; false refuses plans and mode changes with 409 CONTROL_DISABLED',
      default: false,
      hint: 'write true only after the checks in docs/control.md "Before enabling control"',
    },
    dryRun: {
      type: 'boolean',
      description: 'record the writes control would make (audit log, metrics) without sending them to any device',
      default: false,
      hint: 'write true to watch what control would do before letting it act',
    },
    reserveSoc: percent(
      'state of charge (percent) no discharge goes below and backup mode charges back to, until Home Assistant or the API sets another (docs/control.md "The reserve")',
      20,
    ),
    socMin: percent('lowest state of charge (percent) a discharge command may reach', 10),
    socMax: percent('highest state of charge (percent) a charge command may reach', 100),
    maxChargeW: watts(
      'largest battery charge power a command may ask for, W (the nameplate caps it too)',
      5000,
      1_000_000,
    ),
    maxDischargeW: watts(
      'largest battery discharge power a command may ask for, W (the nameplate caps it too)',
      5000,
      1_000_000,
    ),
    importLimitW: watts(
      'most power the site may draw from the grid while a command runs (main fuse), W',
      11000,
      1_000_000,
    ),
    exportLimitW: watts('most power the site may feed into the grid while a command runs, W', 11000, 1_000_000),
    gridCharge: {
      type: 'boolean',
      description: 'a charge command may draw from the grid (false: charge only from PV surplus)',
      default: true,
      hint: 'write false where the tariff or the grid operator forbids charging the battery from the grid',
    },
    chargeEfficiency: efficiency('charge', 'a kWh charged from the AC side stores this fraction of it'),
    dischargeEfficiency: efficiency(
      'discharge',
      'a kWh taken from the battery delivers this fraction of it on the AC side',
    ),
    cycleCostPerKWh: {
      type: 'number',
      description:
        "the optimiser's wear cost of the battery per kWh discharged, in site.currency: a plan cycles only where the spread pays it",
      default: 0,
      minimum: 0,
      maximum: 100,
      hint: 'give the battery price over the energy it delivers in its life (capacity × rated cycles), e.g. 0.05; 0 plans as if cycling cost nothing',
    },
    revertSeconds: {
      type: 'integer',
      description:
        "life of every command on the device without the gateway (the device's revert timer or the keep-alive period), in the device's seconds",
      default: 60,
      minimum: 10,
      maximum: 900,
      hint: 'use whole seconds between 10 and 900, usually 60: after a crash the battery returns to self-consumption within this time',
    },
  },
} as const satisfies SchemaNode;
