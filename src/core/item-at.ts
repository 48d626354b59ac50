/**
 * `list[i]` where the caller has bounded `i` (a loop over a parallel array, a fixed phase index):
 * under noUncheckedIndexedAccess the plain read is `T | undefined`, and a `!` would hide a
 * miscounted index as NaN downstream. A miss here is a bug, so it throws where it happens.
 */
export function itemAt<T>(list: ArrayLike<T>, i: number): T {
  const value = list[i];
  if (value === undefined) throw new RangeError(`index ${i} outside 0..${list.length - 1}`);
  return value;
}
