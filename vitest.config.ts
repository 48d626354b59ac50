import { defineConfig } from 'vitest/config';
import { E2E, globs, SLOW } from './test/projects.js';

const ALL = 'test/**/*.test.ts';

export default defineConfig({
  test: {
    // no root include: projects that extend this config would add it to their own
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests bind real ports and spawn daemons: keep files parallel but bounded for 2-core CI
    maxWorkers: 2,
    // the run's temporary folders in one folder, the daemons' kept energy counts in another (not one
    // file per test left in /dev/shm), both removed at its end, and the libfaketime segments of
    // daemons killed by SIGKILL
    globalSetup: [
      './test/support/run-tmpdir.ts',
      './test/support/energy-keep-dir.ts',
      './test/support/faketime-leftovers.ts',
    ],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // one project per kind of test, so `npm test` runs each file once and test:unit, test:e2e and
    // test:slow each run one kind (test/projects.ts says which file is which)
    projects: [
      // unit files share their workers' module cache (isolate: false): they start nothing and leave
      // no state behind (test/projects.ts checks what they may not do), and re-importing the
      // gateway for each of ~140 files was two thirds of the project's CPU (182 s → 57 s here)
      {
        extends: true,
        test: { name: 'unit', include: [ALL], exclude: [...globs(SLOW), ...globs(E2E)], isolate: false },
      },
      { extends: true, test: { name: 'e2e', include: globs(E2E), exclude: globs(SLOW) } },
      { extends: true, test: { name: 'slow', include: globs(SLOW) } },
    ],
  },
});
