/**
 * Issue 16 finding 7: `sitegw <command> --help` (and -h) prints that command's usage and exits 0
 * for every command the top-level usage lists, instead of "Unknown option '--help'". The list is
 * read from `sitegw --help`, so a command added there is covered here without editing this file.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sitegwCommand } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const sitegw = (args: string[]) => spawnSync(...sitegwCommand(args), { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

const top = sitegw(['--help']);
const COMMANDS = [...new Set([...top.stdout.matchAll(/^ {2}sitegw ([a-z-]+)/gm)].map((m) => m[1]!))];

describe('--help on every command', () => {
  it('the top-level usage lists the commands', () => {
    expect(top.status).toBe(0);
    expect(COMMANDS).toEqual(
      expect.arrayContaining([
        'demo',
        'simulate',
        'scan',
        'run',
        'check-config',
        'clients',
        'owner',
        'tls',
        'backup',
        'restore',
      ]),
    );
  });

  it.each(COMMANDS)('sitegw %s --help prints its usage and exits 0', (name) => {
    const r = sitegw([name, '--help']);
    expect(r.stderr).not.toMatch(/Unknown option|unknown command/i);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage:\\n {2}sitegw ${name}\\b`));
    // its own entry only, not the whole list
    expect(r.stdout.match(/^ {2}sitegw /gm)).toHaveLength(1);
  });

  it('-h after other arguments, and a subcommand of clients, print the usage too', () => {
    for (const args of [
      ['scan', '--tcp', '10.0.0.1', '-h'],
      ['clients', 'add', '--help'],
    ]) {
      const r = sitegw(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`sitegw ${args[0]}`);
    }
  });
});
