import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { weakValidator } from '../../src/yaml/weak-validator.js';
import { collectWeakRefs } from '../support/gc.js';

function counted() {
  let compiles = 0;
  const get = weakValidator(() => {
    compiles++;
    return new Ajv().compile({ type: 'object', required: ['a'] });
  });
  return { get, compiles: () => compiles };
}

describe('weakValidator', () => {
  it('compiles on first use and reuses the validator while it is alive', () => {
    const v = counted();
    expect(v.compiles()).toBe(0);
    const first = v.get();
    expect(first({ a: 1 })).toBe(true);
    expect(first({})).toBe(false);
    expect(v.get()).toBe(first);
    expect(v.compiles()).toBe(1);
  });

  it('lets a collection free the validator once nobody holds it, and compiles it again when needed', async () => {
    const v = counted();
    expect(v.get()({ a: 1 })).toBe(true);
    // the test's own weak look at it: the validator is freed once nothing holds it
    const first = new WeakRef(v.get());
    await collectWeakRefs(() => first.deref() === undefined);
    expect(first.deref()).toBeUndefined();
    expect(v.get()({})).toBe(false);
    expect(v.compiles()).toBe(2);
  });
});
