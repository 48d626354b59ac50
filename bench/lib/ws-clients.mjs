/**
 * WebSocket clients for bench/scale.ts, in their own process so their work is not the gateway's:
 * a token by client credentials (POST /oauth2/token), then `clients` sockets (each from its own
 * loopback address, one partner's dashboards on as many LAN hosts) subscribed to
 * telemetry-realtime (docs/api.md "Events"). A round is the messages that arrive until the line
 * has been quiet for QUIET_MS; the parent is told the time the last client got its last message
 * of the round, and whether every client got as many entries as the first.
 */
import WebSocket from 'ws';

const QUIET_MS = 400;
const { tokenUrl, clientId, secret, url, clients } = JSON.parse(process.argv[2]);

const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
const res = await fetch(tokenUrl, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
  body: 'grant_type=client_credentials',
});
if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
const token = (await res.json()).access_token;

const entries = new Array(clients).fill(0);
let lastAt = 0;
let quiet;
const sockets = [];
const ws = `${url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime&telemetryInclude=default,energy`;
for (let i = 0; i < clients; i++) {
  // each from its own loopback address, as dashboards on 50 LAN hosts (limits.http.maxConnectionsPerAddress)
  const s = new WebSocket(ws, { headers: { authorization: `Bearer ${token}` }, localAddress: `127.0.1.${i + 1}` });
  s.on('message', (data) => {
    entries[i] += JSON.parse(data.toString()).entries?.length ?? 0;
    lastAt = performance.timeOrigin + performance.now();
    clearTimeout(quiet);
    quiet = setTimeout(() => {
      const want = entries[0];
      process.send({ round: true, lastAt, entries: want, short: entries.filter((n) => n !== want).length });
      entries.fill(0);
    }, QUIET_MS);
  });
  s.on('error', (err) => process.send({ error: String(err) }));
  sockets.push(s);
}
await Promise.all(sockets.map((s) => new Promise((r) => s.once('open', r))));
// keep-alive: the gateway closes a client silent for 60 s
setInterval(() => {
  for (const s of sockets) s.ping();
}, 15_000).unref();
process.send({ ready: true });
process.on('message', (m) => {
  if (m.exit) {
    for (const s of sockets) s.close();
    process.exit(0);
  }
});
