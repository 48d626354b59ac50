import type { ControlConfig } from '../../src/config/types.js';

/** A control envelope for unit tests: control on, reserveSoc above socMin, grid charge allowed. */
export const testEnvelope: ControlConfig = {
  enabled: true,
  dryRun: false,
  reserveSoc: 20,
  socMin: 10,
  socMax: 95,
  maxChargeW: 3000,
  maxDischargeW: 3000,
  importLimitW: 5000,
  exportLimitW: 4000,
  gridCharge: true,
  revertSeconds: 60,
  chargeEfficiency: 0.95,
  dischargeEfficiency: 0.95,
  cycleCostPerKWh: 0,
};
