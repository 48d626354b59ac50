/** `sitegw owner set-password`: the site owner's login for the consent page (src/auth/owner.ts). */
import { parseArgs } from 'node:util';
import { ClientError } from '../auth/clients.js';
import { setOwnerPassword } from '../auth/owner.js';
import { target, WHERE_OPTIONS, WHERE_USAGE, withDb } from './data-dir.js';
import { EXIT, type Output, printError, printUsage, stdio } from './output.js';

/** One line from the terminal without echo; Ctrl-C ends the process as an interrupt. */
export function askHidden(io: Output, prompt: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise<string>((done) => {
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
        if (ch === '\u0003') process.exit(EXIT.INTERRUPTED);
        value = ch === '\u007f' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The first line of piped stdin (a password a script hands over). */
export async function firstLineOfStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.split(/\r?\n/)[0] ?? '';
}

/** The password from the terminal without echo (twice, to catch typos), or the first line of piped stdin. */
async function readPassword(io: Output): Promise<string> {
  if (!process.stdin.isTTY) return firstLineOfStdin();
  const first = await askHidden(io, 'new owner password: ');
  const second = await askHidden(io, 'again: ');
  if (first !== second) throw new ClientError('the two passwords differ');
  return first;
}

export async function ownerCommand(argv: string[], io: Output = stdio): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...WHERE_OPTIONS, username: { type: 'string', short: 'u' } },
  });
  if (sub !== 'set-password' || positionals.length > 0) {
    printUsage(io, [
      `sitegw owner set-password ${WHERE_USAGE} [--username NAME]   (the password is read from the terminal or stdin)`,
    ]);
    return EXIT.USAGE;
  }
  const t = await target('owner set-password', values, io);
  if (typeof t === 'number') return t;
  const username = values.username ?? 'owner';
  try {
    const password = await readPassword(io);
    const { revokedTokens } = await withDb(t.dataDir, (db) => setOwnerPassword(db, username, password, Date.now()));
    const revoked =
      revokedTokens > 0 ? `; ${revokedTokens} customer token(s) issued on the old password were revoked` : '';
    io.out(`owner '${username}' can now log in on the consent page${revoked}\n`);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof ClientError) {
      printError(io, 'owner set-password', e.message);
      return EXIT.FAILURE;
    }
    throw e;
  }
}
