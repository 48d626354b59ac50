/**
 * Where the sun is and how much clear-sky light reaches a tilted panel.
 *
 * Solar position: NOAA Global Monitoring Laboratory, "General Solar Position Calculations"
 * (fractional-year Fourier series for the equation of time and declination after Spencer, 1971,
 * "Fourier series representation of the position of the sun", Search 2(5)). Accurate to about a
 * minute of time / a few tenths of a degree, plenty for a simulated roof.
 * Angle of incidence on a tilted surface: Duffie & Beckman, "Solar Engineering of Thermal
 * Processes", eq. 1.6.2. Air mass: Kasten & Young (1989), Applied Optics 28(22).
 * Clear-sky direct normal irradiance: Meinel & Meinel (1976), DNI = 1353·0.7^(AM^0.678), with
 * diffuse taken as 10 % of direct (both as presented in PVEducation, "Air Mass" / "Calculation of
 * Solar Insolation").
 */

const DEG = Math.PI / 180;
const DAY_MS = 86_400_000;

export interface PanelGeometry {
  latDeg: number;
  lonDeg: number;
  /** 0 = horizontal */
  tiltDeg: number;
  /** surface azimuth from south, west positive (Duffie & Beckman's γ); 0 = facing south */
  azimuthFromSouthDeg: number;
}

/** Year-start lookups are the only costly part of the series; one cache serves every call. */
let cachedYearStart = 0;
let cachedYearEnd = -1;
function yearStartUtc(ts: number): number {
  if (ts >= cachedYearStart && ts < cachedYearEnd) return cachedYearStart;
  const y = new Date(ts).getUTCFullYear();
  cachedYearStart = Date.UTC(y, 0, 1);
  cachedYearEnd = Date.UTC(y + 1, 0, 1);
  return cachedYearStart;
}

export interface SunPosition {
  /** cos of the solar zenith angle; ≤ 0 below the horizon */
  cosZenith: number;
  declinationRad: number;
  /** solar hour angle, negative before solar noon */
  hourAngleRad: number;
}

export function sunPosition(ts: number, latDeg: number, lonDeg: number): SunPosition {
  const y0 = yearStartUtc(ts);
  const daysInYear = (cachedYearEnd - cachedYearStart) / DAY_MS;
  // γ = 2π/365 · (day_of_year − 1 + (hour − 12)/24)
  const g = ((2 * Math.PI) / daysInYear) * ((ts - y0) / DAY_MS - 0.5);
  const c1 = Math.cos(g);
  const s1 = Math.sin(g);
  const c2 = Math.cos(2 * g);
  const s2 = Math.sin(2 * g);
  const eqTimeMin = 229.18 * (0.000075 + 0.001868 * c1 - 0.032077 * s1 - 0.014615 * c2 - 0.040849 * s2);
  const decl =
    0.006918 -
    0.399912 * c1 +
    0.070257 * s1 -
    0.006758 * c2 +
    0.000907 * s2 -
    0.002697 * Math.cos(3 * g) +
    0.00148 * Math.sin(3 * g);
  const utcMin = (((ts % DAY_MS) + DAY_MS) % DAY_MS) / 60_000;
  const trueSolarMin = utcMin + eqTimeMin + 4 * lonDeg;
  const ha = (trueSolarMin / 4 - 180) * DEG;
  const lat = latDeg * DEG;
  const cosZenith = Math.sin(lat) * Math.sin(decl) + Math.cos(lat) * Math.cos(decl) * Math.cos(ha);
  return { cosZenith, declinationRad: decl, hourAngleRad: ha };
}

/** Clear-sky irradiance on the panel plane, W/m², 0 with the sun down. The panel's constant trig is hoisted. */
export function clearSkyPlane(geo: PanelGeometry): (ts: number) => number {
  const phi = geo.latDeg * DEG;
  const beta = geo.tiltDeg * DEG;
  const gam = geo.azimuthFromSouthDeg * DEG;
  const sp = Math.sin(phi);
  const cp = Math.cos(phi);
  const sb = Math.sin(beta);
  const cb = Math.cos(beta);
  const cg = Math.cos(gam);
  const sg = Math.sin(gam);
  const diffuseView = (1 + cb) / 2;
  return (ts) => {
    const { cosZenith, declinationRad: d, hourAngleRad: w } = sunPosition(ts, geo.latDeg, geo.lonDeg);
    if (cosZenith <= 0) return 0;
    const zenithDeg = Math.acos(cosZenith) / DEG;
    const airMass = 1 / (cosZenith + 0.50572 * (96.07995 - zenithDeg) ** -1.6364);
    const dni = 1353 * 0.7 ** (airMass ** 0.678);
    const sd = Math.sin(d);
    const cd = Math.cos(d);
    const cw = Math.cos(w);
    const cosIncidence =
      sd * sp * cb - sd * cp * sb * cg + cd * cp * cb * cw + cd * sp * sb * cg * cw + cd * sb * sg * Math.sin(w);
    return dni * Math.max(0, cosIncidence) + 0.1 * dni * diffuseView;
  };
}
