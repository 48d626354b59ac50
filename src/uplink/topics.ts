/**
 * The uplink's topic tree below the configured prefix (docs/mqtt-contract.md, docs/asyncapi.yaml). Device ids are
 * limited to [a-z0-9_-] by the config schema, so they are safe as topic levels.
 */
export const TOPIC = {
  telemetry: 'telemetry',
  gridEvents: 'grid-events',
  topology: 'topology',
  status: 'status',
  availability: (deviceId: string) => `devices/${deviceId}/availability`,
  resync: 'cmd/resync',
  resyncResponse: 'cmd/resync/response',
  plan: 'cmd/plan',
  planResponse: 'cmd/plan/response',
  limits: 'cmd/limits',
  limitsResponse: 'cmd/limits/response',
} as const;

/**
 * Payload version: bumped when a field changes meaning or goes away (new fields do not bump it).
 * 2: a grid event's `deviceId` is the connection point's stream id, no longer the meter's device id.
 */
export const PAYLOAD_VERSION = 2;

export const topicOf = (prefix: string, suffix: string): string => `${prefix}/${suffix}`;
