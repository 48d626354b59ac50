/**
 * Where the site's limits come from and which one is in force (docs/limits.md "Sources"): each
 * source says, for a moment, the export, import and generation limits it asks for; the most
 * restrictive value of each is in force, with the source that set it. The sources are an explicit
 * list, in the order a tie is credited: a new one (the grid operator's client, src/gridop/) joins
 * it by name with `SiteLimits.add`.
 */

export const LIMIT_NAMES = ['exportW', 'importW', 'generationW'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** every source the gateway knows, in the order a tie is credited */
export const LIMIT_SOURCES = ['site.yaml', 'grid-operator', 'schedule', 'price', 'fail-safe'] as const;
export type LimitSourceName = (typeof LIMIT_SOURCES)[number];

/** What one source asks for at a moment, W; a limit it leaves out it does not restrict. */
export type LimitValues = Partial<Record<LimitName, number>>;

export interface LimitSource {
  readonly name: LimitSourceName;
  /** the limits this source asks for at `now` (ms) */
  at(now: number): LimitValues;
  /**
   * the most restrictive it asks for anywhere in [start, end): what a plan over that span must keep
   * to. A source without it (the price: the optimiser prices exports itself; the fail-safe: only
   * ever now) plans nothing
   */
  over?(start: number, end: number): LimitValues;
}

export interface LimitInForce {
  watts: number;
  source: LimitSourceName;
}
export type LimitsInForce = Partial<Record<LimitName, LimitInForce>>;

export class SiteLimits {
  private readonly sources = new Map<LimitSourceName, LimitSource>();

  /** Adds a source, or replaces the one of the same name. */
  add(source: LimitSource): void {
    this.sources.set(source.name, source);
  }

  remove(name: LimitSourceName): void {
    this.sources.delete(name);
  }

  has(name: LimitSourceName): boolean {
    return this.sources.has(name);
  }

  /**
   * The most restrictive value of each limit the sources that plan ahead (`over`) ask for anywhere
   * in [start, end): the optimiser's limits for a slot (docs/optimiser.md "Limits and curtailment").
   */
  over(start: number, end: number): LimitsInForce {
    return mostRestrictive(
      LIMIT_SOURCES.flatMap((name) => {
        const s = this.sources.get(name);
        return s?.over ? [{ name, values: s.over(start, end) }] : [];
      }),
    );
  }

  /** The most restrictive value of each limit at `now`, with its source (ties: the first in LIMIT_SOURCES). */
  inForce(now: number): LimitsInForce {
    return mostRestrictive(
      LIMIT_SOURCES.flatMap((name) => {
        const s = this.sources.get(name);
        return s ? [{ name, values: s.at(now) }] : [];
      }),
    );
  }
}

/** The lowest value of each limit among `asks`, credited to the first source that asked for it. */
export function mostRestrictive(asks: readonly { name: LimitSourceName; values: LimitValues }[]): LimitsInForce {
  const out: LimitsInForce = {};
  for (const { name, values } of asks)
    for (const limit of LIMIT_NAMES) {
      const w = values[limit];
      if (w === undefined || !Number.isFinite(w)) continue;
      const now = out[limit];
      if (!now || w < now.watts) out[limit] = { watts: Math.max(0, w), source: name };
    }
  return out;
}
