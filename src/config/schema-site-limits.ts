/**
 * site.yaml `limits:` keys for the site's grid connection (docs/limits.md): the export, import and
 * generation limits of the connection agreement, the fail-safe, and what a negative export price
 * does. They sit beside `limits.http` and `limits.dynamicTariffs` (what one API client may tie up).
 */
import type { SchemaNode } from '../yaml/schema.js';

const MAX_W = 10_000_000;
const watts = (description: string, hint: string) =>
  ({ type: 'integer', description, minimum: 0, maximum: MAX_W, hint }) as const satisfies SchemaNode;

export const SITE_LIMIT_KEYS = {
  exportW: watts(
    'most power the site may feed into the grid at the grid meter, W; 0 = zero export (the connection agreement)',
    'write whole watts, e.g. 5000, or 0 for zero export; leave it out when the connection has no export limit',
  ),
  importW: watts(
    'most power the site may draw from the grid at the grid meter, W (main fuse, a grid operator): battery charging is shed first',
    'write whole watts, e.g. 11000; leave it out when there is none',
  ),
  generationW: watts(
    "most AC power the site's inverters together may deliver, W",
    'write whole watts, e.g. 7000; leave it out when there is none',
  ),
  failSafeW: watts(
    "the inverters' total output when the gateway or the grid meter is gone, W (default: exportW)",
    'write whole watts, usually the export limit of the connection agreement',
  ),
  negativeExportPrice: {
    type: 'string',
    description: "'curtail': export 0 while the site tariff's export price is below 0; 'ignore': sell at any price",
    default: 'curtail',
    enum: ['curtail', 'ignore'],
    hint: "use 'curtail' (export nothing that costs money) or 'ignore'",
  },
  revertSeconds: {
    type: 'integer',
    description:
      "how long an inverter keeps the gateway's limit without a write before it reverts (to the fail-safe where it keeps one, SunSpec 704; to unlimited otherwise), seconds",
    default: 60,
    minimum: 10,
    maximum: 120,
    hint: 'use whole seconds between 10 and 120, usually 60: a dead gateway leaves the site at the fail-safe within this time',
  },
} as const satisfies Record<string, SchemaNode>;
