/**
 * What a user is shown of the site limits (docs/limits.md "Where it shows"): the limits in force
 * with their sources, the cap on the inverters, and the curtailed power, on /metrics, the status
 * page, Home Assistant and the uplink's status message; one shape for all of them.
 *
 * The curtailed power is an upper bound. No register gives the power a limited inverter could
 * have made (its MPPT leaves the PV's best point as soon as it is held), so while the inverters
 * deliver their cap it is their rating less the cap (the PV may give less than the rating), and
 * while they deliver less than the cap it is 0: the PV is below the cap and nothing is held back.
 */
import { LIMIT_NAMES, type LimitName, type LimitsInForce } from './sources.js';

/** the inverters deliver their cap when within this fraction of their rating of it (their output lags a limit) */
export const AT_CAP_FRACTION = 0.01;

export interface SiteLimitsStatus {
  /** each limit in force, W, with its source */
  inForce: LimitsInForce;
  /** the most the inverters together may deliver now, W; null: unlimited */
  capW: number | null;
  /** the limit that sets the cap, null when none binds */
  binding: LimitName | null;
  /** the inverters' output the limits hold back, W, at most (see above); 0 while nothing is held back */
  curtailedW: number;
  /** the grid meter is silent: the inverters are at the fail-safe */
  failSafe: boolean;
}

/** The curtailed power's upper bound for inverters of `ratedW` together delivering `outputW` under `capW`. */
export function curtailedW(capW: number | null, ratedW: number, outputW: number): number {
  if (capW === null || ratedW <= 0 || capW >= ratedW) return 0;
  if (outputW < capW - AT_CAP_FRACTION * ratedW) return 0;
  return Math.round(ratedW - Math.max(0, capW));
}

/** The limits in force as the API answers them (GET …/limits `inForce`, the uplink's status): W or null, and each one's source. */
export function inForceBody(f: LimitsInForce) {
  const sources: Record<string, string> = {};
  for (const n of LIMIT_NAMES) if (f[n]) sources[n] = f[n].source;
  return {
    exportW: f.exportW?.watts ?? null,
    importW: f.importW?.watts ?? null,
    generationW: f.generationW?.watts ?? null,
    sources,
  };
}

/** The limits as the uplink's status message carries them (docs/mqtt-contract.md "The status"). */
export function limitsStatusBody(s: SiteLimitsStatus) {
  return { inForce: inForceBody(s.inForce), capW: s.capW, curtailedW: s.curtailedW, failSafe: s.failSafe };
}
