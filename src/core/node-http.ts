/**
 * What sitegw uses of node:http at run time, loaded with require, never with an ES import.
 *
 * Node 22 builds an ES module's view of node:http by reading every export, and its lazy
 * `WebSocket` export loads undici, which compiles its HTTP parser with WebAssembly. The unit runs
 * node with --lite-mode, which has no JIT and so no WebAssembly: the compile rejects, and the
 * unhandled rejection ended the daemon about half a second after start (Node 22.23; Node 20 and
 * 24 do not read that export). Type-only imports of node:http are erased and may stay;
 * test/runtime/no-webassembly.test.ts proves that no gateway module loads undici. Benchmarks
 * and test helpers that run under the unit's flags take node:http from here too.
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { Agent, STATUS_CODES, ServerResponse, createServer, request } = http;
