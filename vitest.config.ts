import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests bind real ports and spawn daemons: keep files parallel but bounded for 2-core CI
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
