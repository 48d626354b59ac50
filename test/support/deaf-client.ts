/**
 * A Modbus TCP client that sends requests and never reads its socket, with a fixed receive
 * buffer as embedded loggers and many stacks have: setting SO_RCVBUF turns off Linux's receive
 * autotuning, so its kernel takes a few KiB of answers and every further byte waits on the
 * gateway's side of the connection, as the tester's client made it. Node cannot set SO_RCVBUF on
 * a TCP socket, so it is Debian's python3 with its socket module; the test says when it sends
 * (a line with a count on its stdin), so it keeps a few requests waiting and is never a flood.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

const SCRIPT = `
import socket, struct, sys
port, address, quantity, rcvbuf = (int(a) for a in sys.argv[1:5])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
s.connect(('127.0.0.1', port))
print('sent 0', flush=True)
sent = 0
for line in sys.stdin:
    try:
        for _ in range(int(line)):
            s.sendall(struct.pack('>HHHBBHH', sent & 0xffff, 0, 6, 1, 4, address, quantity))
            sent += 1
    except OSError as e:
        print('cut', sent, e.errno, flush=True)
        break
    print('sent', sent, flush=True)
`;

export class DeafClient {
  sent = 0;
  private text = '';
  private waiter: (() => void) | null = null;
  private exited = false;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (d: Buffer) => {
      this.text += d.toString();
      const lines = this.text.split('\n');
      this.text = lines.pop()!;
      for (const line of lines) {
        const m = /^(?:sent|cut) (\d+)/.exec(line);
        if (m) this.sent = Number(m[1]);
        this.wake();
      }
    });
    child.stdin.on('error', () => undefined);
    child.once('exit', () => {
      this.exited = true;
      this.wake();
    });
  }

  /** FC4 reads of `quantity` registers at `address` to 127.0.0.1:`port`, its receive buffer `rcvbufBytes` */
  static async open(port: number, address: number, quantity: number, rcvbufBytes: number): Promise<DeafClient> {
    const child = spawn(
      '/usr/bin/python3',
      ['-c', SCRIPT, String(port), String(address), String(quantity)].concat(String(rcvbufBytes)),
    );
    const c = new DeafClient(child);
    await c.next();
    return c;
  }

  /** sends `n` more requests; false once the connection is gone */
  async send(n: number): Promise<boolean> {
    if (this.exited) return false;
    this.child.stdin.write(`${n}\n`);
    await this.next();
    return !this.exited;
  }

  close(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private next(): Promise<void> {
    return new Promise((resolve) => {
      if (this.exited) resolve();
      else this.waiter = resolve;
    });
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }
}
