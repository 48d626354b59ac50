/**
 * `sitegw clients add|list|assign|rotate-secret|remove`: registers the API's clients (src/auth/clients.ts).
 * Run as the user the daemon runs as, so the database stays readable by it.
 */
import { parseArgs } from 'node:util';
import {
  addClient,
  assignDevices,
  ClientError,
  type ClientRow,
  listClients,
  removeClient,
  rotateClientSecret,
} from '../auth/clients.js';
import { target, WHERE_OPTIONS, WHERE_USAGE, withDb } from './data-dir.js';
import { EXIT, type Output, printError, printUsage, stdio } from './output.js';

const SUBCOMMANDS = ['add', 'list', 'assign', 'rotate-secret', 'remove'] as const;

const USAGE = [
  `sitegw clients add ID ${WHERE_USAGE} [--name TEXT] [--scope S]... [--device ID]... ` +
    '[--redirect-uri URL]... [--public]',
  `sitegw clients list ${WHERE_USAGE}`,
  `sitegw clients assign ID ${WHERE_USAGE} [--device ID]...`,
  `sitegw clients rotate-secret ID ${WHERE_USAGE}`,
  `sitegw clients remove ID ${WHERE_USAGE}`,
];

const list = (v: string[] | undefined): string[] =>
  (v ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');

function describe(c: ClientRow): string {
  return [
    `${c.id}  (${c.name})`,
    `  type:          ${c.secretHash === null ? 'public (PKCE, no secret)' : 'confidential'}`,
    `  scopes:        ${c.scopes.join(' ')}`,
    `  devices:       ${c.devices.length > 0 ? c.devices.join(', ') : '(none: sees no device as a partner)'}`,
    `  redirect URIs: ${c.redirectUris.length > 0 ? c.redirectUris.join(' ') : '(none: client credentials only)'}`,
  ].join('\n');
}

export async function clientsCommand(argv: string[], io: Output = stdio): Promise<number> {
  const [word, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      ...WHERE_OPTIONS,
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      device: { type: 'string', multiple: true },
      'redirect-uri': { type: 'string', multiple: true },
      public: { type: 'boolean' },
    },
  });
  const sub = SUBCOMMANDS.find((s) => s === word);
  const [id, ...more] = positionals;
  if (sub === undefined || more.length > 0 || (sub === 'list') !== (id === undefined)) {
    printUsage(io, USAGE);
    return EXIT.USAGE;
  }
  const t = await target(`clients ${sub}`, values, io);
  if (typeof t === 'number') return t;
  const known = t.config ? new Set(t.config.devices.map((d) => d.id)) : undefined;
  const clientId = id ?? '';
  const now = Date.now();
  try {
    return await withDb(t.dataDir, async (db) => {
      switch (sub) {
        case 'add': {
          const wanted = {
            id: clientId,
            name: values.name,
            scopes: list(values.scope),
            devices: list(values.device),
            redirectUris: list(values['redirect-uri']),
            public: values.public,
          };
          const { client, secret } = await addClient(db, wanted, now, known);
          io.out(`${describe(client)}\n`);
          if (secret) {
            io.out(
              `\nclient secret: ${secret}\nStore it now: it is shown only this once ` +
                `(sitegw clients rotate-secret ${clientId} issues a new one).\n`,
            );
          }
          for (const u of client.redirectUris) {
            if (u.startsWith('http://') && !/^http:\/\/(localhost|127\.|\[::1\])/.test(u)) {
              io.err(`warning: ${u} is plain http: the authorization code crosses the network unencrypted\n`);
            }
          }
          if (!known && client.devices.length > 0) {
            io.err('note: devices were not checked against a site.yaml (use --config to check them)\n');
          }
          return EXIT.OK;
        }
        case 'list': {
          const clients = listClients(db);
          io.out(clients.length === 0 ? 'no clients registered\n' : `${clients.map(describe).join('\n\n')}\n`);
          return EXIT.OK;
        }
        case 'assign':
          io.out(`${describe(assignDevices(db, clientId, list(values.device), known))}\n`);
          return EXIT.OK;
        case 'rotate-secret': {
          const secret = await rotateClientSecret(db, clientId, now);
          io.out(
            `client secret: ${secret}\nStore it now: it is shown only this once. ` +
              'The old secret and every token issued with it no longer work.\n',
          );
          return EXIT.OK;
        }
        case 'remove': {
          const r = removeClient(db, clientId, now);
          io.out(
            `removed client ${clientId}: ${r.revokedTokens} token(s) revoked, ` +
              `taken off the publishTo list of ${r.publishChanges.length} device(s)\n`,
          );
          return EXIT.OK;
        }
      }
    });
  } catch (e) {
    if (e instanceof ClientError) {
      printError(io, `clients ${sub}`, e.message);
      return EXIT.FAILURE;
    }
    throw e;
  }
}
