/**
 * The API's schema validators. Query strings and path parameters arrive as text, so their
 * numbers and booleans are coerced (`?compact=1`); a JSON body carries its own types and is not:
 * coercing it turned `"Infinity"` into a stored ±inf battery power, `true` into 1 W and
 * `"50"` into a target state of charge (issue 40 finding 5). A body whose member has the wrong
 * type is answered 400 naming the member (errors.ts).
 */
import { Ajv, type Options } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { CHECKED_BY_HANDLER } from '../../control/plan-body.js';
import { COMMA_LIST } from './lenient-query.js';

function ajv(coerceTypes: boolean, shared: object[]): Ajv {
  // fastify's own defaults (useDefaults, removeAdditional), with coercion chosen per part
  const opts: Options = {
    coerceTypes,
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    strict: false,
    // a route's schema compiled twice (HEAD beside GET) must not clash with itself by its $id
    addUsedSchema: false,
  };
  const a = new Ajv(opts);
  a.addKeyword({ keyword: COMMA_LIST, schemaType: 'boolean' });
  // OpenAPI 3.0's example of a value, for the document and the tools that read it
  a.addKeyword({ keyword: 'example' });
  for (const s of shared) a.addSchema(s);
  return a;
}

/** Installs the two validators on `app`; `shared` are the schemas added with app.addSchema. */
export function installValidators(app: FastifyInstance, shared: object[]): void {
  const text = ajv(true, shared);
  const json = ajv(false, shared);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    // a body its handler reads member by member (a plan: parsePlanBody) is not validated twice
    httpPart === 'body' && (schema as Record<string, unknown>)[CHECKED_BY_HANDLER] === true
      ? () => true
      : (httpPart === 'body' ? json : text).compile(schema),
  );
}
