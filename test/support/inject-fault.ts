/**
 * Preloaded (node --import) into a child daemon by test/e2e/fatal-fault.test.ts: SIGWINCH makes the
 * fault SITEGW_INJECT names escape every handler, as a bug in one would. Test-only; never shipped.
 */
process.on('SIGWINCH', () => {
  if (process.env.SITEGW_INJECT === 'exception') throw new Error('injected uncaught exception');
  void Promise.reject(new Error('injected unhandled rejection'));
});
