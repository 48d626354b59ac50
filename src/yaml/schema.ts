/**
 * The one schema dialect of the project's YAML files (site.yaml, device profiles): plain JSON
 * Schema for ajv, written as `as const` literals so that `Infer<typeof node>` reads the type of
 * the validated value off the same literal. One definition gives both the rule and the type, and
 * the literal is the exact schema ajv compiles, so error messages (messages.ts reads a failed
 * rule's `hint` and bounds back) stay what they were. TypeBox stays for HTTP, where fastify
 * wants it; it was not used here because its unions are `anyOf` without ajv's discriminator
 * (connection errors would name every branch's keys) and a key with a default would type as
 * optional although it is always filled in.
 */

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';

export type SchemaNode = {
  readonly $schema?: string;
  readonly type?: JsonType | readonly JsonType[];
  readonly description?: string;
  /** what a correct value looks like; shown after the error message */
  readonly hint?: string;
  readonly default?: unknown;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | SchemaNode;
  readonly propertyNames?: SchemaNode;
  readonly items?: SchemaNode;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly enum?: readonly (string | number)[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  /** alternatives picked by the value of one key (ajv `discriminator`); each branch has that key as a one-value enum */
  readonly discriminator?: { readonly propertyName: string };
  readonly oneOf?: readonly SchemaNode[];
  /** `#/$defs/<name>`: a node of the root's $defs, referenced rather than repeated */
  readonly $ref?: string;
  readonly $defs?: Readonly<Record<string, SchemaNode>>;
};

declare const NARROWED: unique symbol;
type Narrowed<T> = { readonly [NARROWED]?: T };

/**
 * Types a node's value more narrowly than its JSON Schema says (stop bits 1..2 as `1 | 2`), where
 * an enum would change the error an installer reads. Adds nothing to the schema itself.
 */
export function narrow<T>() {
  return <N extends SchemaNode>(node: N): N & Narrowed<T> => node;
}

/** The value a node validates, with every default filled in (ajv `useDefaults`). */
export type Infer<N, D = N extends { readonly $defs: infer X } ? X : unknown> =
  N extends Narrowed<infer T> ? (unknown extends T ? Inferred<N, D> : T) : Inferred<N, D>;

type Inferred<N, D> = N extends { readonly $ref: `#/$defs/${infer K}` }
  ? K extends keyof D
    ? Infer<D[K], D>
    : never
  : N extends { readonly oneOf: readonly (infer B)[] }
    ? B extends unknown
      ? Infer<B, D>
      : never
    : N extends { readonly enum: readonly (infer E)[] }
      ? E
      : N extends { readonly type: infer T }
        ? ByType<N, T, D>
        : unknown;

type ByType<N, T, D> = T extends readonly (infer U)[]
  ? ByType<N, U, D>
  : T extends 'string'
    ? string
    : T extends 'number' | 'integer'
      ? number
      : T extends 'boolean'
        ? boolean
        : T extends 'array'
          ? N extends { readonly items: infer I }
            ? Infer<I, D>[]
            : unknown[]
          : T extends 'object'
            ? ObjectOf<N, D>
            : never;

type ObjectOf<N, D> = N extends { readonly properties: infer P }
  ? Props<P, N extends { readonly required: readonly (infer R)[] } ? R : never, D>
  : N extends { readonly additionalProperties: infer A extends SchemaNode }
    ? Record<string, Infer<A, D>>
    : Record<string, unknown>;

/** Keys always there after validation: required ones and those with a default. */
type Present<P, R> = {
  [K in keyof P]: K extends R ? K : P[K] extends { readonly default: unknown } ? K : never;
}[keyof P];

type Props<P, R, D> = Flat<
  { -readonly [K in Present<P, R>]: Infer<P[K], D> } & {
    -readonly [K in Exclude<keyof P, Present<P, R>>]?: Infer<P[K], D>;
  }
>;

type Flat<T> = { [K in keyof T]: T[K] } & {};

/**
 * Ids end up inside stream ids and URL paths (`/api/v1/devices/{id}`), so they are restricted to
 * characters that need no escaping anywhere.
 */
export const ID_PATTERN = '^[a-z0-9_-]+$';
export const ID_HINT = "use 1 to 64 lowercase letters, digits, '-' or '_', e.g. 'inverter-1'";
