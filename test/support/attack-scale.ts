/**
 * The attack suite (test/attack/) runs bounded in the CI test run. `SITEGW_ATTACK=long` multiplies
 * its request counts for a longer run by hand: `SITEGW_ATTACK=long npx vitest run test/attack`.
 */
export const ATTACK_LONG = process.env.SITEGW_ATTACK === 'long';

/** `n` in the CI run, `n * long` with SITEGW_ATTACK=long. */
export function attackCount(n: number, long = 20): number {
  return ATTACK_LONG ? n * long : n;
}
