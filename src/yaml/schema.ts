/**
 * The JSON Schema subset the YAML files (site.yaml, device profiles) are written in, typed so
 * error translation (messages.ts) can read a failed rule's `hint` and bounds back.
 */

export type SchemaNode = {
  $schema?: string;
  type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  description?: string;
  /** what a correct value looks like; shown after the error message */
  hint?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean;
  items?: SchemaNode;
  minItems?: number;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** alternatives picked by the value of one key (ajv `discriminator`); each branch has that key as a one-value enum */
  discriminator?: { propertyName: string };
  oneOf?: SchemaNode[];
};

/**
 * Ids end up inside stream ids and URL paths (`/api/v1/devices/{id}`), so they are restricted to
 * characters that need no escaping anywhere.
 */
export const ID_PATTERN = '^[a-z0-9_-]+$';
export const ID_HINT = "use 1 to 64 lowercase letters, digits, '-' or '_', e.g. 'inverter-1'";

