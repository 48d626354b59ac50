/**
 * What a device says about itself (nameplate registers, SunSpec common model). Drivers learn it,
 * the scan reports it and the site lists it, so it lives below all three.
 */
export interface DeviceIdentity {
  manufacturer?: string;
  model?: string;
  serial?: string;
  version?: string;
}
