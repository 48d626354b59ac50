/**
 * Stream (sensor) ids of a device, built from the configured device id. Clients must not parse
 * them (docs/api.md "Sensor ID suffixes (telemetry streams)"); they are stable across restarts because config ids are.
 */
export const streamIds = {
  inverter: (inverterId: string) => inverterId,
  batteryAggregate: (inverterId: string) => `${inverterId}__bb_agg`,
  batteryBlock: (batteryId: string) => batteryId,
  pvAggregate: (inverterId: string) => `${inverterId}__dcm`,
  pvModule: (inverterId: string, n: number) => `${inverterId}__pv${n}`,
  gridMeter: (meterId: string) => `${meterId}__GRID_METER_DERIVED`,
  consumptionMeter: (meterId: string) => meterId,
  /** house consumption from the energy balance, on sites without a consumption meter */
  consumptionDerived: (siteId: string) => `${siteId}__CONSUMPTION_METER_DERIVED`,
};
