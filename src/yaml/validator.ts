/**
 * An ajv validator for one YAML file kind: every error reported (an installer fixes them in one
 * pass), the value kept for the messages, and `hint` accepted as the advice next to each rule.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { type Finding, translate } from './messages.js';
import type { Infer, SchemaNode } from './schema.js';
import { weakValidator } from './weak-validator.js';

/** The validator's guard narrows the data to the schema's inferred type: no cast between rule and type. */
export function yamlValidator<N extends SchemaNode>(
  schema: N,
  options: Options = {},
): () => ValidateFunction<Infer<N>> {
  return weakValidator(() => {
    // code.optimize off: ajv's passes over the generated code cost more than they save for a
    // validator run once at start (the profile schema: 1.16 s to compile with them, 0.73 s without;
    // site.yaml's 175 ms and 110 ms; bench/demo-start.ts)
    const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, code: { optimize: false }, ...options });
    // `hint` carries the advice for installers next to each rule; it does not validate anything
    ajv.addKeyword({ keyword: 'hint', schemaType: 'string' });
    return ajv.compile<Infer<N>>(schema);
  });
}

/** The last validation's errors as installer-facing findings. */
export function schemaFindings(validate: ValidateFunction, data: unknown): Finding[] {
  return ((validate.errors ?? []) as ErrorObject[]).map((e) => translate(e, data));
}
