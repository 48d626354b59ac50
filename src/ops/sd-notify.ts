/**
 * sd_notify(3) without a native module. The protocol is one AF_UNIX SOCK_DGRAM datagram of
 * newline-separated KEY=VALUE lines to $NOTIFY_SOCKET (a path, or '@name' in the abstract
 * namespace). Node's net module speaks only stream sockets and dgram only UDP, so the datagram
 * leaves through a helper:
 *
 * - `systemd-notify` per message would fork for every ping and exits right after sending; PID 1
 *   then may not find the sender's unit (the race described in systemd-notify(1)). Its barrier
 *   that closes the race needs a receiver that handles passed file descriptors.
 * - A native addon (unix-dgram and friends) is what the project rules out.
 * - So: one small Perl forwarder, started once and kept alive beside the daemon. perl-base is
 *   Essential on Debian and Raspberry Pi OS (always installed); its core Socket module speaks
 *   SOCK_DGRAM. It reads messages from stdin (lines, a blank line ends one message) and sends each
 *   as one datagram. It lives in the service's cgroup, so the unit needs NotifyAccess=all.
 *   Line by line, not perl's paragraph mode ($/ = ""): that reads past a blank line to see
 *   whether more follow, so each message waited for the next one (a READY=1 reached systemd only
 *   with the next watchdog ping, and not at all without a watchdog).
 *
 * With NOTIFY_SOCKET unset nothing is spawned and every call does nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from 'pino';

const FORWARDER = String.raw`
use strict; use warnings; use Socket;
my $path = $ENV{NOTIFY_SOCKET} // exit 2;
$path =~ s/^@/\0/;
socket(my $s, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!\n";
my $to = pack_sockaddr_un($path);
binmode STDIN;
my $msg = "";
sub out { return unless length $msg; send($s, $msg, 0, $to) or print STDERR "sd_notify: send to $ENV{NOTIFY_SOCKET} failed: $!\n"; $msg = ""; }
while (my $line = <STDIN>) {
  if ($line eq "\n") { out(); } else { $msg .= $line; }
}
out();
`;

/** KEY=VALUE fields of one notification; values are kept to one line. */
export type NotifyFields = Record<string, string>;

export interface SdNotifyOptions {
  env?: NodeJS.ProcessEnv;
  log: Logger;
  /** the interpreter; tests may point elsewhere */
  perl?: string;
}

/** A one-line STATUS: systemctl status shows it; newlines would end the field. */
export function oneLine(s: string, max = 200): string {
  const flat = s.replace(/[\r\n]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function formatMessage(fields: NotifyFields): string {
  const lines = Object.entries(fields).map(([k, v]) => {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(k)) throw new Error(`sd_notify: bad field name '${k}'`);
    return `${k}=${oneLine(v, 1000)}`;
  });
  return `${lines.join('\n')}\n\n`;
}

/**
 * The watchdog period systemd asked for (WatchdogSec=), in ms, or null when there is none or it
 * is meant for another process (WATCHDOG_PID).
 */
export function watchdogMs(env: NodeJS.ProcessEnv = process.env, pid = process.pid): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isFinite(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return null;
  return usec / 1000;
}

export class SdNotify {
  private child: ChildProcess | null = null;
  private readonly socket: string | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private warned = false;

  constructor(private readonly opts: SdNotifyOptions) {
    this.env = opts.env ?? process.env;
    this.socket = this.env.NOTIFY_SOCKET || undefined;
  }

  /** true when a service manager listens (NOTIFY_SOCKET set) */
  get enabled(): boolean {
    return this.socket !== undefined;
  }

  start(): void {
    if (!this.enabled || this.child) return;
    const child = spawn(this.opts.perl ?? 'perl', ['-e', FORWARDER], {
      env: { PATH: this.env.PATH ?? '/usr/bin:/bin', NOTIFY_SOCKET: this.socket },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    child
      .stderr!.setEncoding('utf8')
      .on('data', (d: string) => this.opts.log.warn({ detail: d.trim() }, 'sd_notify forwarder'));
    // a dead forwarder is restarted at the next message; the daemon itself is not affected
    child.on('error', (err) => this.lost(child, err.message));
    child.on('exit', (code) => this.lost(child, `exited with ${code}`));
    child.stdin!.on('error', () => {});
    this.child = child;
  }

  private lost(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    if (!this.warned)
      this.opts.log.warn(
        { why },
        'sd_notify forwarder stopped (is perl installed?); systemd will not hear from the daemon until it is back',
      );
    this.warned = true;
  }

  notify(fields: NotifyFields): void {
    if (!this.enabled) return;
    if (!this.child) this.start();
    this.child?.stdin?.write(formatMessage(fields));
  }

  /** Sends what is queued, then lets the forwarder end. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        child.kill();
        resolve();
      }, 2000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.stdin!.end();
    });
  }
}
