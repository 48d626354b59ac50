/**
 * `sitegw clients ...`, `sitegw owner set-password` and `sitegw tls fingerprint`: what the
 * installer runs on the box (as the user the daemon runs as, so the files stay readable by it).
 * They work on the data directory while the daemon runs: the daemon reads clients per request.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { certificatePaths, selfSignedPaths, wantsTls } from '../api/http/tls.js';
import { formatConfigErrors } from '../yaml/format.js';
import { loadConfig } from '../profiles/site-config.js';
import type { SiteConfig } from '../config/types.js';
import { openDatabase, type Database } from '../store/db.js';
import { addClient, assignDevices, ClientError, listClients, removeClient, rotateClientSecret, type ClientRow } from './clients.js';
import { setOwnerPassword } from './owner.js';

type Out = { out: (s: string) => void; err: (s: string) => void };
const std: Out = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

const WHERE = {
  config: { type: 'string', short: 'c' },
  'data-dir': { type: 'string' },
} as const;

interface Target {
  dataDir: string;
  config?: SiteConfig;
}

/** --config FILE (devices are checked against it) or --data-dir DIR. */
async function target(values: { config?: string; 'data-dir'?: string }, io: Out): Promise<Target | number> {
  if (values.config) {
    const r = await loadConfig(values.config);
    if (!r.ok) {
      for (const line of formatConfigErrors(r.errors, values.config)) io.err(`${line}\n`);
      return r.unreadable ? 2 : 1;
    }
    return { dataDir: r.config.dataDir, config: r.config };
  }
  if (values['data-dir']) return { dataDir: resolve(values['data-dir']) };
  io.err('give --config FILE (the site.yaml the daemon runs with) or --data-dir DIR\n');
  return 2;
}

async function withDb<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openDatabase(join(dataDir, 'sitegw.db'));
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

const list = (v: string[] | undefined): string[] => (v ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');

function describe(c: ClientRow): string {
  return [
    `${c.id}  (${c.name})`,
    `  type:          ${c.secretHash === null ? 'public (PKCE, no secret)' : 'confidential'}`,
    `  scopes:        ${c.scopes.join(' ')}`,
    `  devices:       ${c.devices.length > 0 ? c.devices.join(', ') : '(none: sees no device as a partner)'}`,
    `  redirect URIs: ${c.redirectUris.length > 0 ? c.redirectUris.join(' ') : '(none: client credentials only)'}`,
  ].join('\n');
}

const CLIENTS_USAGE = `usage:
  sitegw clients add ID (--config FILE | --data-dir DIR) [--name TEXT] [--scope S]... [--device ID]... [--redirect-uri URL]... [--public]
  sitegw clients list (--config FILE | --data-dir DIR)
  sitegw clients assign ID (--config FILE | --data-dir DIR) [--device ID]...
  sitegw clients rotate-secret ID (--config FILE | --data-dir DIR)
  sitegw clients remove ID (--config FILE | --data-dir DIR)
`;

export async function clientsCommand(argv: string[], io: Out = std): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      ...WHERE,
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      device: { type: 'string', multiple: true },
      'redirect-uri': { type: 'string', multiple: true },
      public: { type: 'boolean' },
    },
  });
  const needsId = sub !== 'list';
  if (!sub || !['add', 'list', 'assign', 'rotate-secret', 'remove'].includes(sub) || (needsId && positionals.length !== 1) || (!needsId && positionals.length > 0)) {
    io.err(CLIENTS_USAGE);
    return 2;
  }
  const t = await target(values, io);
  if (typeof t === 'number') return t;
  const known = t.config ? new Set(t.config.devices.map((d) => d.id)) : undefined;
  const id = positionals[0]!;
  const now = Date.now();
  try {
    return await withDb(t.dataDir, async (db) => {
      switch (sub) {
        case 'add': {
          const { client, secret } = await addClient(
            db,
            { id, name: values.name, scopes: list(values.scope), devices: list(values.device), redirectUris: list(values['redirect-uri']), public: values.public },
            now,
            known,
          );
          io.out(`${describe(client)}\n`);
          if (secret) io.out(`\nclient secret: ${secret}\nStore it now: it is shown only this once (sitegw clients rotate-secret ${id} issues a new one).\n`);
          for (const u of client.redirectUris) {
            if (u.startsWith('http://') && !/^http:\/\/(localhost|127\.|\[::1\])/.test(u)) io.err(`warning: ${u} is plain http: the authorization code crosses the network unencrypted\n`);
          }
          if (!known && client.devices.length > 0) io.err('note: devices were not checked against a site.yaml (use --config to check them)\n');
          return 0;
        }
        case 'list': {
          const clients = listClients(db);
          io.out(clients.length === 0 ? 'no clients registered\n' : `${clients.map(describe).join('\n\n')}\n`);
          return 0;
        }
        case 'assign':
          io.out(`${describe(assignDevices(db, id, list(values.device), known))}\n`);
          return 0;
        case 'rotate-secret': {
          const secret = await rotateClientSecret(db, id, now);
          io.out(`client secret: ${secret}\nStore it now: it is shown only this once. The old secret and every token issued with it no longer work.\n`);
          return 0;
        }
        case 'remove': {
          const r = removeClient(db, id, now);
          io.out(`removed client ${id}: ${r.revokedTokens} token(s) revoked, taken off the publishTo list of ${r.publishChanges.length} device(s)\n`);
          return 0;
        }
      }
      return 2;
    });
  } catch (e) {
    if (e instanceof ClientError) {
      io.err(`sitegw clients ${sub}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

/** The password from the terminal without echo (twice, to catch typos), or the first line of piped stdin. */
async function readPassword(io: Out): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    return text.split(/\r?\n/)[0] ?? '';
  }
  const ask = (prompt: string) =>
    new Promise<string>((done) => {
      io.err(prompt);
      let value = '';
      stdin.setRawMode(true);
      stdin.resume();
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off('data', onData);
            io.err('\n');
            return done(value);
          }
          if (ch === '\u0003') process.exit(130);
          value = ch === '\u007f' ? value.slice(0, -1) : value + ch;
        }
      };
      stdin.on('data', onData);
    });
  const first = await ask('new owner password: ');
  const second = await ask('again: ');
  if (first !== second) throw new ClientError('the two passwords differ');
  return first;
}

export async function ownerCommand(argv: string[], io: Out = std): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...WHERE, username: { type: 'string', short: 'u' } } });
  if (sub !== 'set-password' || positionals.length > 0) {
    io.err('usage: sitegw owner set-password (--config FILE | --data-dir DIR) [--username NAME]   (the password is read from the terminal or stdin)\n');
    return 2;
  }
  const t = await target(values, io);
  if (typeof t === 'number') return t;
  const username = values.username ?? 'owner';
  try {
    const password = await readPassword(io);
    const { revokedTokens } = await withDb(t.dataDir, (db) => setOwnerPassword(db, username, password, Date.now()));
    io.out(`owner '${username}' can now log in on the consent page${revokedTokens > 0 ? `; ${revokedTokens} customer token(s) issued on the old password were revoked` : ''}\n`);
    return 0;
  } catch (e) {
    if (e instanceof ClientError) {
      io.err(`sitegw owner set-password: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

export async function tlsCommand(argv: string[], io: Out = std): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: WHERE });
  if (sub !== 'fingerprint' || positionals.length > 0) {
    io.err('usage: sitegw tls fingerprint (--config FILE | --data-dir DIR)\n');
    return 2;
  }
  const t = await target(values, io);
  if (typeof t === 'number') return t;
  const file = t.config ? certificatePaths(t.config).cert : selfSignedPaths(t.dataDir).cert;
  if (t.config && !wantsTls(t.config)) io.err('note: with this site.yaml the API serves plain HTTP (loopback, or http.insecure)\n');
  if (!existsSync(file)) {
    io.err(`no certificate at ${file} yet: sitegw creates it on its first start with HTTPS\n`);
    return 1;
  }
  const cert = new X509Certificate(readFileSync(file));
  io.out(`SHA-256 fingerprint: ${cert.fingerprint256}\ncertificate:         ${file}\nnames:               ${cert.subjectAltName ?? cert.subject}\nvalid until:         ${cert.validTo}\n`);
  return 0;
}
