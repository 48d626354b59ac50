import type { GridEvent } from '../core/events.js';

/**
 * A grid-events message (spec "Stream grid-events"), as the WebSocket and the uplink send it.
 * `deviceId` is the stream id, so a client finds the meter in the topology and its `state` in
 * telemetry.
 */
export function gridEventMessage(e: GridEvent): string {
  return JSON.stringify({
    stream: 'grid-events',
    deviceId: e.streamId,
    timestamp: new Date(e.timestamp).toISOString(),
    deviceKind: 'meter',
    state: e.state,
  });
}
