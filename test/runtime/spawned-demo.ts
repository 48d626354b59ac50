import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from '../support/demo.js';

export interface SpawnedDemo {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** the API address from the banner; rejects at once, with the end of stderr, if the process ends first */
  url: Promise<string>;
  /** settles at the log line of the history fill's end (it runs behind the banner); rejects like `url` */
  filled: Promise<void>;
}

/** `sitegw demo` as its own process (cmd and args up to and including the demo's options). */
export function spawnDemo(cmd: string, args: string[], cwd: string, startMs: number): SpawnedDemo {
  const child = spawn(cmd, args, { cwd });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const died = exit.then((e) => {
    throw new Error(`the demo ended before it served: ${JSON.stringify(e)}; ${err.slice(-800)}`);
  });
  died.catch(() => undefined); // once the address is seen, the caller awaits the exit itself
  const url = Promise.race([
    waitFor('the API address', () => /Energy Site API:\s+(http:\/\/\S+)/.exec(out)?.[1], startMs),
    died,
  ]);
  const filled = Promise.race([
    waitFor('the history fill', () => out.includes('"msg":"history pre-filled"'), startMs).then(() => undefined),
    died,
  ]);
  filled.catch(() => undefined); // awaited only by callers that asked for history
  return { child, out: () => out, err: () => err, exit, url, filled };
}

/** Stops a demo a failed or timed-out test left running. */
export function killLeftover(d: SpawnedDemo | undefined): void {
  if (d && d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
}
