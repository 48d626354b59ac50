/**
 * The unit runs node with --lite-mode, which has no JIT and so no WebAssembly. Node's undici
 * (fetch, WebSocket, and on Node 22 any ES import of node:http) compiles its HTTP parser with
 * WebAssembly when it loads, and under --lite-mode that rejects and the unhandled rejection ends
 * the process: the daemon died that way half a second after start on Node 22.23
 * (src/core/node-http.ts). Every module the gateway can load is imported here under the unit's
 * flags, and none may have loaded undici. The cloud consumer (`sitegw consume`, src/consumer/)
 * is left out: it runs in the cloud under plain node, and its PostgreSQL client loads undici.
 */
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { sourceFiles } from '../architecture/folder-order.js';
import { ROOT } from '../support/cli.js';
import { unitRuntime } from '../support/unit-runtime.js';

const CLOUD_ONLY = [/^consumer\//, /^cli\/consume\.ts$/];
// src/cli.ts runs the command line when imported; what it dispatches to is imported on its own
const RUNS_WHEN_IMPORTED = ['cli.ts'];

function gatewayModules(): string[] {
  const src = join(ROOT, 'src');
  return sourceFiles(src).filter((file) => {
    const f = relative(src, file).split('\\').join('/');
    return !RUNS_WHEN_IMPORTED.includes(f) && !CLOUD_ONLY.some((re) => re.test(f));
  });
}

it(`Node ${process.versions.node}: no module of the gateway loads undici under the unit's node flags`, {
  timeout: 60_000,
}, () => {
  const modules = gatewayModules();
  expect(modules.length).toBeGreaterThan(100);
  const script = [
    `const modules = ${JSON.stringify(modules)};`,
    'for (const m of modules) {',
    '  await import(m);',
    "  if (process.moduleLoadList.some((l) => l.includes('undici'))) {",
    '    process.stdout.write(JSON.stringify({ undiciAfter: m, webAssembly: typeof WebAssembly }));',
    '    process.exit(0);',
    '  }',
    '}',
    'process.stdout.write(JSON.stringify({ undiciAfter: null, imported: modules.length }));',
  ].join('\n');
  const r = spawnSync(
    process.execPath,
    [...unitRuntime().args, '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(r.stderr.replace(/^Warning: disabling flag --expose_wasm.*\n/m, '')).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ undiciAfter: null, imported: modules.length });
});
