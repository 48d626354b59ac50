import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { unitRuntime } from '../support/unit-runtime.js';

// a flag this Node does not know stops it before any code runs (exit 9), and systemd restarts it for ever
it(`Node ${process.versions.node} starts with the node flags of systemd/sitegw.service`, () => {
  const { args } = unitRuntime();
  const r = spawnSync(process.execPath, [...args, '-e', 'process.stdout.write("started")'], { encoding: 'utf8' });
  expect({ status: r.status, stdout: r.stdout, badOption: /bad option.*/.exec(r.stderr)?.[0] ?? null }).toEqual({
    status: 0,
    stdout: 'started',
    badOption: null,
  });
});
