/** What a device is on the site; site.yaml's `role:`, a profile's `roles:` keys and a scan's findings. */
export const DEVICE_ROLES = ['inverter', 'battery', 'grid-meter', 'consumption-meter'] as const;
export type DeviceRole = (typeof DEVICE_ROLES)[number];
