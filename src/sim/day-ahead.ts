/**
 * A synthetic year of day-ahead prices (EUR/MWh per quarter hour) for the optimiser's checks and its
 * value benchmark; no installable package ships a real series. Seeded and pure: the same (seed,
 * instant) gives the same price.
 *
 * The shape and spread follow the published statistics of the German-Luxembourg day-ahead auction
 * for 2024 (FfE, "Deutsche Strompreise an der Börse EPEX Spot im Jahr 2024", ffe.de, 2025):
 * base (annual mean) 79.6 EUR/MWh, peak (Mon–Fri 08–20) 88.2, off-peak 74.8; almost 460 hours
 * with negative prices, at sunny midday hours mostly in spring and summer and on weekends. Daily
 * spreads are wider in summer than in winter, the solar dip at midday deeper (Entelios, "Day-Ahead
 * electricity price with highest spread-price ratio in 4 years", 2024). The model: a seasonal level,
 * a morning and an evening peak, a midday solar dip scaled by season and a day's sunniness, a
 * weekend discount, wind days that lower the whole day, and quarter-hour noise. `test/optimiser`
 * checks the year's base, peak/base ratio and negative-hour count against the figures above.
 */
import { hash01, valueNoise } from './noise.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const gauss = (x: number, mu: number, sigma: number) => Math.exp(-0.5 * ((x - mu) / sigma) ** 2);

/** Day-ahead price at ts (EUR/MWh), on Europe/Berlin-like local time given as a UTC offset in hours. */
export function dayAheadPrice(ts: number, seed = 1, utcOffsetHours = 1): number {
  const local = ts + utcOffsetHours * HOUR;
  const day = Math.floor(local / DAY);
  const h = (local - day * DAY) / HOUR;
  const weekday = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
  const weekend = weekday === 0 || weekday === 6;
  const yearPhase = (2 * Math.PI * (((day % 365.25) + 365.25) % 365.25)) / 365.25; // 0 = 1 January
  const summer = 0.5 - 0.5 * Math.cos(yearPhase - 0.3); // 0 in winter, 1 in early summer
  // level: dearer in winter; wind days (slow noise) take a lot off the whole day
  const wind = valueNoise(seed, 501, day / 2.5);
  const level = 84 - 9 * summer - 60 * (wind - 0.5) - (weekend ? 16 : 0);
  const sun = 0.3 + 0.7 * valueNoise(seed, 502, day / 1.5); // a day's sunniness
  const peaks = 46 * gauss(h, 8, 1.6) + 76 * gauss(h, 18.5, 2) - 24 * gauss(h, 3.5, 2);
  const dip = (10 + 250 * summer) * sun * sun * gauss(h, 13.5, 2.1) * (weekend ? 1.5 : 1);
  const noise = 12 * (hash01(seed, 503, Math.floor(ts / 900_000)) - 0.5);
  return level + peaks - dip + noise;
}

/** One price per slot from start (ms), EUR/MWh. */
export function dayAheadSeries(start: number, slots: number, slotMinutes = 15, seed = 1): number[] {
  return Array.from({ length: slots }, (_, k) => dayAheadPrice(start + k * slotMinutes * 60_000, seed));
}
