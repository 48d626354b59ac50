import type { DeviceConfig } from '../config/types.js';
import type { DaemonContext } from '../main.js';
import { Poller } from '../poller/poller.js';
import type { SimSite } from '../sim/site.js';
import { BUCKET_MS } from '../telemetry/align.js';
import { SimMemoryReader } from './memory-reader.js';

/** how many poll steps of the fill run between two turns of the event loop (a few ms of CPU) */
const YIELD_EVERY = 20;

/**
 * Fills past buckets by stepping the simulator from `from` to the clock's present one poll
 * period at a time, polling every device through the in-memory reader and closing buckets as
 * boundaries pass, with the daemon's own poller, profiles and bucketer. Returns the time it
 * reached; live polling carries on from there.
 *
 * The in-memory polls resolve without ever reaching the event loop, so the fill yields to it every
 * `YIELD_EVERY` steps: a Ctrl-C during a long fill is heard, `stop` is aborted, and the fill ends
 * where it is, so the demo can stop at once rather than after the whole history.
 */
export async function prefillHistory(
  ctx: DaemonContext,
  sim: SimSite,
  from: number,
  stop?: AbortSignal,
  /** told the time reached at every bucket close (the demo's API says how far the fill is) */
  reached?: (t: number) => void,
): Promise<number> {
  const readers = {
    inverter: new SimMemoryReader(sim, 'inverter'),
    meter: new SimMemoryReader(sim, 'meter'),
  };
  // the simulator keeps its meters on the meter host however the site reaches them (TCP or RTU)
  const readerFor = (d: DeviceConfig) =>
    d.role === 'grid-meter' || d.role === 'consumption-meter' ? readers.meter : readers.inverter;
  const poller = new Poller({ site: ctx.site, bus: ctx.bus, clock: ctx.clock, readerFor, log: ctx.log });
  const period = poller.tickMs;
  let t = Math.ceil(from / period) * period;
  let closed = Math.floor(t / BUCKET_MS) * BUCKET_MS;
  const started = Date.now();
  ctx.log.info({ from: new Date(from).toISOString() }, 'pre-filling history (Ctrl-C stops the demo meanwhile)');
  let steps = 0;
  // the live clock keeps moving while we fill; chase it, then hand over
  while (t < ctx.clock.now() - period) {
    if (++steps % YIELD_EVERY === 0) {
      await new Promise((r) => setImmediate(r));
      if (stop?.aborted) {
        ctx.log.info({ until: new Date(t).toISOString() }, 'history pre-fill stopped early: the demo is stopping');
        reached?.(t);
        return t;
      }
    }
    sim.update(t);
    const at = t;
    await poller.cycle(() => at);
    const boundary = Math.floor(t / BUCKET_MS) * BUCKET_MS;
    if (boundary > closed) {
      ctx.bucketer.closeUntil(boundary);
      closed = boundary;
      reached?.(boundary);
    }
    t += period;
  }
  ctx.log.info(
    { from: new Date(from).toISOString(), until: new Date(t).toISOString(), ms: Date.now() - started },
    'history pre-filled',
  );
  reached?.(t);
  return t;
}
