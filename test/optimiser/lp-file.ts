/**
 * The optimiser's problem (docs/optimiser.md "The problem") written as a CPLEX LP file from the case
 * alone, for an independent solver (GLPK's glpsol) to check the optimiser against. Written from the
 * problem statement, not from the solver: one variable per flow per slot, one per PV curtailed and
 * one per stored energy. The site's limits (docs/optimiser.md "Limits and curtailment") are bounds:
 * export at most the export limit, PV used at most the generation limit, import at most the import
 * limit or the house's own deficit, whichever is more; a curtailed kWh costs the export it would have
 * been (and 1e-4 more) where negativeExportPrice is `ignore`, else nothing.
 */
import type { OptimiserCase } from '../../src/optimiser/case.js';

const num = (x: number) => (Object.is(x, -0) ? '0' : String(x));
/** `+ 3 x` / `- 3 x` terms; zero coefficients left out */
function terms(pairs: [number, string][]): string {
  const out = pairs
    .filter(([k]) => k !== 0)
    .map(([k, v]) => `${k < 0 ? '-' : '+'} ${num(Math.abs(k))} ${v}`)
    .join(' ');
  return out === '' ? '0 c0' : out;
}

export function lpFile(c: OptimiserCase): string {
  const T = c.importPrice.length;
  const h = c.slotMinutes / 60;
  const b = c.battery;
  const cap = b.capacityWh / 100;
  // the objective in currency per slot-hour per kWh (the cost × 1000/h): coefficients of the
  // prices' own size, so glpsol's optimality tolerances are not larger than the prices' differences
  const lines: string[] = ['\\ sitegw optimiser case: objective = cost × 1000 / slot hours', 'Minimize'];
  const obj: [number, string][] = [];
  const l = c.limits;
  const limit = (v: (number | null)[] | undefined, t: number) => v?.[t] ?? Number.POSITIVE_INFINITY;
  const pvCap = (t: number) => Math.min(c.pvW[t]!, limit(l?.generationW, t));
  for (let t = 0; t < T; t++) {
    obj.push([c.importPrice[t]!, `i${t}`]);
    obj.push([-c.exportPrice[t]!, `e${t}`]);
    obj.push([b.cycleCostPerKWh, `d${t}`]);
    if (l?.negativeExportPrice === 'ignore') obj.push([Math.max(0, -c.exportPrice[t]!) + 1e-4, `k${t}`]);
  }
  lines.push(` obj: ${terms(obj)}`, 'Subject To');
  for (let t = 0; t < T; t++) {
    lines.push(` bal${t}: + u${t} + i${t} + d${t} - e${t} - c${t} = ${num(c.loadW[t]!)}`);
    // PV curtailed: what the forecast gives and the plan does not use
    lines.push(` cur${t}: + u${t} + k${t} = ${num(c.pvW[t]!)}`);
    // E(t+1) = E(t) + ηc·c·h − d·h/ηd, with E(0) the constant start
    const prev = t === 0 ? '' : ` - E${t}`;
    const rhs = t === 0 ? b.socInitial * cap : 0;
    lines.push(
      ` soc${t}: + E${t + 1}${prev} ${terms([
        [-b.chargeEfficiency * h, `c${t}`],
        [h / b.dischargeEfficiency, `d${t}`],
      ])} = ${num(rhs)}`,
    );
    if (!c.grid.gridCharge) lines.push(` gc${t}: + c${t} - u${t} <= 0`);
  }
  lines.push('Bounds');
  for (let t = 0; t < T; t++) {
    lines.push(` 0 <= c${t} <= ${num(b.maxChargeW)}`);
    lines.push(` 0 <= d${t} <= ${num(b.maxDischargeW)}`);
    lines.push(` 0 <= u${t} <= ${num(pvCap(t))}`);
    lines.push(` 0 <= k${t} <= ${num(c.pvW[t]!)}`);
    const houseDeficit = c.loadW[t]! - pvCap(t);
    lines.push(` 0 <= i${t} <= ${num(Math.min(c.grid.maxImportW, Math.max(limit(l?.importW, t), houseDeficit)))}`);
    lines.push(` 0 <= e${t} <= ${num(Math.min(c.grid.maxExportW, limit(l?.exportW, t)))}`);
    const lo = t + 1 === T ? Math.max(b.socMin, b.socFinalMin) * cap : b.socMin * cap;
    lines.push(` ${num(lo)} <= E${t + 1} <= ${num(b.socMax * cap)}`);
  }
  lines.push('End', '');
  return lines.join('\n');
}
