/**
 * An ajv validator compiled when first needed and then held only weakly. The daemon validates
 * site.yaml and the device profiles once, at start; a strongly held validator would keep its
 * generated source and code in the heap for the years the gateway then runs (about 3 MB for
 * the two, bench/README.md "Footprint"). Callers that validate in a burst (check-config, the tests)
 * keep getting the same compiled function until a garbage collection finds it unused.
 */
import type { ValidateFunction } from 'ajv';

export function weakValidator<T>(compile: () => ValidateFunction<T>): () => ValidateFunction<T> {
  let held: WeakRef<ValidateFunction<T>> | undefined;
  return () => {
    let validate = held?.deref();
    if (!validate) {
      validate = compile();
      held = new WeakRef(validate);
    }
    return validate;
  };
}
