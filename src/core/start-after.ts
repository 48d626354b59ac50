/**
 * A slow step of the daemon's start run in the background (the demo's history pre-fill), and the
 * features that must not start before it ends (they hear its readings or close its buckets).
 * The features started meanwhile (the API) serve at once; what waits starts when the step ends,
 * in the order it was deferred. A stop never waits for the step's end: the step is aborted (it
 * ends where it is), and a deferred feature that has not started yet is not started at all.
 */
import type { Logger } from 'pino';
import type { Feature } from './feature.js';

type State = 'waiting' | 'starting' | 'started' | 'stopped';

export class StartAfter implements Feature {
  private readonly abort = new AbortController();
  private running: Promise<void> = Promise.resolve();
  /** the deferred features' starts, one after the other, behind the step */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly step: (stop: AbortSignal) => Promise<void>,
    private readonly log: Logger,
    /** the step begins when this settles (the demo: after its banner), or not at all if stopped before */
    private readonly gate: Promise<void> = Promise.resolve(),
  ) {}

  /** Returns at once; the step runs after the gate; a failed step is logged and what waits starts anyway. */
  start(): void {
    const { signal } = this.abort;
    const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.running = Promise.race([this.gate, stopped])
      .then(() => (signal.aborted ? undefined : this.step(signal)))
      .catch((err: unknown) => {
        this.log.error({ err }, `${this.name} failed; the daemon goes on without the rest of it`);
      });
    this.queue = this.running;
  }

  /** Settles when the step has ended (done, aborted or failed) and every feature deferred so far has started. */
  get done(): Promise<void> {
    return this.queue;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** `f`, started once the step and the features deferred before it have; put in the feature list in its place. */
  defer(f: Feature): Feature {
    let state: State = 'waiting';
    /** whether f started (false: it failed and undid itself, core/feature.ts) */
    let starting: Promise<boolean> = Promise.resolve(false);
    const log = this.log;
    return {
      name: f.name,
      start: () => {
        this.queue = this.queue.then(() => {
          if (state !== 'waiting') return;
          state = 'starting';
          starting = Promise.resolve(f.start()).then(
            () => {
              if (state === 'starting') state = 'started';
              return true;
            },
            (err: unknown) => {
              state = 'stopped';
              log.error({ err, feature: f.name }, `starting ${f.name} after the ${this.name} failed`);
              return false;
            },
          );
          return starting.then(() => undefined);
        });
      },
      stop: async () => {
        const was = state;
        state = 'stopped';
        if ((was === 'starting' || was === 'started') && (await starting)) await f.stop();
      },
      health: () => (state === 'started' && f.health ? f.health() : {}),
    };
  }
}
