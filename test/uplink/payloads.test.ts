import { describe, expect, it } from 'vitest';
import { streamIds } from '../../src/core/streams.js';
import { GridWatch } from '../../src/grid/watch.js';
import { gridEventBody } from '../../src/uplink/payloads.js';

describe('uplink grid-events payload', () => {
  it('names the connection point stream (as the WebSocket does), under payload version 2', () => {
    const streamId = streamIds.gridMeter('grid-meter');
    const watch = new GridWatch({ streamId, deviceId: 'grid-meter', debounce: 1 });
    watch.observe({ streamId, ts: 0, values: { state: 'ok' } });
    const e = watch.observe({ streamId, ts: 1000, values: { state: 'not_present' } })!;
    const body = JSON.parse(gridEventBody({ siteId: 's', stream: () => undefined, socScale: 'percent' }, e).body);
    expect(body).toMatchObject({
      v: 2,
      stream: 'grid-events',
      deviceId: streamId,
      deviceKind: 'meter',
      state: 'not_present',
    });
  });
});
