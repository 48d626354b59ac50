/**
 * The wait before the next try after `failures` failures in a row (0: after the first): `first`,
 * doubled at each further failure, never more than `most`. One rule for every retry of the
 * gateway (a Modbus link, a unit that stops answering, the broker, an inverter's limit not yet
 * found): none of them hammers a device or a server that is down, and each is back within `most`
 * of its return.
 */
export function doubling(first: number, most: number, failures: number): number {
  return Math.min(most, first * 2 ** Math.max(0, failures));
}
