/**
 * Helpers for the live-value tests (/metrics, Home Assistant): stopping every simulated device,
 * and the API's newest 15-minute bucket per stream.
 */

import type { demoSite } from './demo.js';
import { getJson, waitFor } from './demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Every simulated unit stops answering; resolves once the bucket holding the last readings is
 * closed. From then on nothing moves: the live energy counts are the ones that bucket stored
 * (the bucketer integrated the held power up to its end when closing it).
 */
export async function silenceAndSettle(demo: Demo): Promise<void> {
  for (const s of demo.sim.identities()) demo.servers.faults.set(s.host, s.unitId, { kind: 'silent' });
  const silencedAt = demo.clock.now();
  const settled = Math.ceil(silencedAt / Q) * Q + Q;
  await waitFor(
    'the bucket of the last readings closed',
    () => demo.clock.now() > settled + 60_000 || undefined,
    60_000,
  );
  await waitFor(
    'every device offline',
    () => [...demo.daemon.site.devices.values()].every((d) => !d.online) || undefined,
    20_000,
  );
}

/** The newest PT15M entry of each stream with energy, as the Energy Site API answers it. */
export async function newestBuckets(
  demo: Demo,
  token: string,
): Promise<
  Map<string, { interval: string; energy_Wh_increment?: number; energy_Wh_decrement?: number; soc?: number }>
> {
  const out = new Map();
  const from = iso(demo.clock.now() - 4 * 3_600_000);
  for (const s of demo.daemon.site.streams()) {
    const { status, body } = await getJson(
      `${demo.url}/api/v1/devices/${encodeURIComponent(s.id)}/telemetry?interval=${from}/PT6H&include=energy,default`,
      token,
    );
    if (status !== 200) throw new Error(`telemetry of ${s.id}: ${status} ${JSON.stringify(body)}`);
    const last = (body.entries as any[]).at(-1);
    if (last) out.set(s.id, last);
  }
  return out;
}
