import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from '../core/node-http.js';
import type { SimSite } from '../sim/site.js';

export interface SimControl {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 1024;

/**
 * A tiny loopback HTTP endpoint that belongs to the simulator, not to the gateway's API: it lets
 * a person or a test open and close the grid relay while the demo runs.
 *
 *   GET  /state                      relay state and the site's instantaneous flows
 *   POST /grid-outage  {"on": true}  open the relay (false closes it)
 */
export async function startSimControl(sim: SimSite, port = 0): Promise<SimControl> {
  const server: Server = createServer((req, res) => {
    handle(sim, req, res).catch(() => send(res, 500, { error: 'internal error' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(sim: SimSite, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/state') return send(res, 200, state(sim));
  if (req.method === 'POST' && path === '/grid-outage') {
    const body = await readBody(req);
    if (body === null) return send(res, 413, { error: `body larger than ${MAX_BODY} bytes` });
    let on: unknown;
    try {
      on = (JSON.parse(body) as { on?: unknown }).on;
    } catch {
      return send(res, 400, { error: 'body must be JSON: {"on": true} or {"on": false}' });
    }
    if (typeof on !== 'boolean')
      return send(res, 400, { error: '"on" must be true (open the relay) or false (close it)' });
    sim.setGridOutage(on);
    return send(res, 200, state(sim));
  }
  send(res, 404, { error: 'GET /state or POST /grid-outage {"on": true|false}' });
}

function state(sim: SimSite) {
  const s = sim.snapshot();
  return {
    time: new Date(s.ts).toISOString(),
    relayClosed: s.relayClosed,
    gridW: s.gridW,
    houseW: s.houseW,
    pvW: s.pvW.reduce((a, b) => a + b, 0),
    batteryW: s.battery.reduce((a, b) => a + b.w, 0),
  };
}

/** The body as text, or null when it is larger than MAX_BODY (read to the end, then dropped). */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    let body = '';
    let tooLarge = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (tooLarge) return;
      body += chunk;
      if (body.length > MAX_BODY) {
        tooLarge = true;
        body = '';
      }
    });
    req.on('end', () => resolve(tooLarge ? null : body));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: object): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}
