import type { Logger } from 'pino';

/** The status page's section of a feature that holds a connection and a queue (the uplink). */
export interface ConnectionStatus {
  connected: boolean;
  /** messages waiting to be sent */
  outboxDepth: number;
  /** the last error in words, e.g. "broker refused the credentials" */
  lastError?: string | null;
}

/** What a feature tells about itself; every member optional, so plain data of its own fits. */
export interface FeatureHealth {
  /** what makes the daemon `degraded` now, one sentence each: /healthz is public, so no site data */
  problems?: string[];
  /** its section on the installer's status page */
  connection?: ConnectionStatus;
}

/**
 * One part of the daemon that starts and stops (src/main.ts keeps them in a list). Its
 * dependencies come through its constructor or the event bus, never patched in after construction.
 */
export interface Feature {
  /** names the feature in the log, in listener-failure metrics and in health */
  readonly name: string;
  start(): void | Promise<void>;
  /** undoes start(); may return a promise (awaited) or any value (ignored) */
  stop(): unknown;
  /** absent: the feature has nothing to tell beyond running */
  health?(): FeatureHealth;
}

/**
 * The started features, in start order. stop() runs them last-first, so what others use (the
 * store) stops after them; a failed start unwinds the same way, so nothing started stays open.
 */
export class FeatureList {
  private readonly started: Feature[] = [];

  constructor(private readonly log: Logger) {}

  /** Starts `f` and keeps it for stop(); one that fails to start is not kept (it undid itself). */
  async start<F extends Feature>(f: F): Promise<F> {
    await f.start();
    this.started.push(f);
    return f;
  }

  get size(): number {
    return this.started.length;
  }

  /** The running feature called `name`. */
  get(name: string): Feature | undefined {
    return this.started.find((f) => f.name === name);
  }

  /** Every running feature's health problems, in start order. */
  problems(): string[] {
    return this.started.flatMap((f) => f.health?.().problems ?? []);
  }

  /** Stops every feature last-first and forgets them; one that fails is logged and the rest still stop. */
  async stop(): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (const f of this.started.splice(0).reverse()) {
      try {
        await f.stop();
      } catch (err) {
        failures.push(err);
        this.log.error({ err, feature: f.name }, `stopping ${f.name} failed; the other features still stop`);
      }
    }
    return failures;
  }
}
