import { describe, expect, it } from 'vitest';
import type { Feature } from '../../src/core/feature.js';
import { FeatureList } from '../../src/core/feature.js';
import { silentLogger } from '../../src/core/log.js';
import { StartAfter } from '../../src/core/start-after.js';

const tick = () => new Promise((r) => setImmediate(r));

function recorder(events: string[], name: string): Feature {
  return {
    name,
    start: () => {
      events.push(`start ${name}`);
    },
    stop: () => {
      events.push(`stop ${name}`);
    },
  };
}

/** A step that runs until its stop signal or `finish()`, one slice an event-loop turn. */
function slowStep(events: string[]) {
  let finish = false;
  return {
    finish: () => (finish = true),
    step: async (stop: AbortSignal) => {
      events.push('step begins');
      while (!finish && !stop.aborted) await tick();
      events.push(stop.aborted ? 'step aborted' : 'step done');
    },
  };
}

describe('StartAfter', () => {
  it('starts what waits after the step, in order, and the features around it at once', async () => {
    const events: string[] = [];
    const list = new FeatureList(silentLogger());
    const s = slowStep(events);
    const after = new StartAfter('fill', s.step, silentLogger());
    await list.start(after);
    await list.start(after.defer(recorder(events, 'a')));
    await list.start(after.defer(recorder(events, 'b')));
    await list.start(recorder(events, 'api'));
    await tick();
    expect(events).toEqual(['step begins', 'start api']);
    s.finish();
    await after.done;
    expect(events).toEqual(['step begins', 'start api', 'step done', 'start a', 'start b']);
    await list.stop();
    expect(events.slice(5)).toEqual(['stop api', 'stop b', 'stop a']);
  });

  it('a stop during the step aborts it and starts nothing that waited', async () => {
    const events: string[] = [];
    const list = new FeatureList(silentLogger());
    const s = slowStep(events);
    const after = new StartAfter('fill', s.step, silentLogger());
    await list.start(after);
    await list.start(after.defer(recorder(events, 'a')));
    await tick();
    await list.stop();
    await after.done;
    expect(events).toEqual(['step begins', 'step aborted']);
  });

  it('runs no step when stopped before its gate opens', async () => {
    const events: string[] = [];
    const list = new FeatureList(silentLogger());
    const s = slowStep(events);
    const after = new StartAfter('fill', s.step, silentLogger(), new Promise<void>(() => undefined));
    await list.start(after);
    await list.start(after.defer(recorder(events, 'a')));
    await tick();
    await list.stop();
    expect(events).toEqual([]);
  });

  it('a failed step is logged and what waits starts anyway', async () => {
    const events: string[] = [];
    const list = new FeatureList(silentLogger());
    const after = new StartAfter('fill', () => Promise.reject(new Error('disk full')), silentLogger());
    await list.start(after);
    await list.start(after.defer(recorder(events, 'a')));
    await after.done;
    expect(events).toEqual(['start a']);
    await list.stop();
    expect(events).toEqual(['start a', 'stop a']);
  });
});
