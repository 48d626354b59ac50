/**
 * Third-party Modbus TCP masters for the proxy tests: Debian's mbpoll, and pymodbus (Debian's
 * python3-pymodbus) run by Debian's own python3. CI installs both (.ci/run); without them the
 * tests that need them are skipped and say so.
 */
import { spawn, spawnSync } from 'node:child_process';

/** Debian's interpreter: the one python3-pymodbus installs into, whatever else is first on PATH */
const PYTHON = '/usr/bin/python3';

export const HAVE_MBPOLL = spawnSync('mbpoll', ['-V'], { stdio: 'ignore' }).status !== null;
export const HAVE_PYMODBUS = spawnSync(PYTHON, ['-c', 'import pymodbus.client'], { stdio: 'ignore' }).status === 0;
export const NO_CLIENTS =
  'mbpoll or python3-pymodbus is not installed: the Modbus proxy client tests are SKIPPED (apt-get install mbpoll python3-pymodbus; .ci/run installs them)';
if (!HAVE_MBPOLL || !HAVE_PYMODBUS) process.stderr.write(`\n*** ${NO_CLIENTS} ***\n\n`);

function run(cmd: string, args: string[], timeoutMs = 20_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/**
 * mbpoll polling input registers [address, address + count) every `everyMs` on one connection
 * until it has printed `polls` answers; the values of each poll. Line-buffered through stdbuf
 * (coreutils): mbpoll's stdout is a pipe here.
 */
export function mbpollReads(port: number, address: number, count: number, polls: number, everyMs = 200) {
  return new Promise<number[][]>((resolve, reject) => {
    const child = spawn(
      'stdbuf',
      ['-oL', 'mbpoll', '-m', 'tcp', '-p', String(port), '-a', '1', '-t', '3', '-0', '-r', String(address)].concat([
        '-c',
        String(count),
        '-l',
        String(everyMs),
        '-o',
        '5',
        '127.0.0.1',
      ]),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const seen: number[][] = [];
    let current: number[] = [];
    let text = '';
    const timer = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error(`mbpoll printed ${seen.length} of ${polls} polls: ${text.slice(-500)}`));
      },
      30_000 + 2 * polls * everyMs,
    );
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const lines = text.split('\n');
      text = lines.pop()!;
      for (const line of lines) {
        const m = /^\[(\d+)\]:\s+(-?\d+)/.exec(line);
        if (!m) continue;
        current.push(Number(m[2]));
        if (current.length < count) continue;
        seen.push(current);
        current = [];
        if (seen.length === polls) {
          clearTimeout(timer);
          child.kill('SIGTERM');
          resolve(seen);
        }
      }
    });
    child.once('error', reject);
  });
}

/** mbpoll writing one holding register (FC6); exit code 0 when the answer was normal. */
export function mbpollWrite(port: number, address: number, value: number) {
  return run(
    'mbpoll',
    ['-m', 'tcp', '-p', String(port), '-a', '1', '-t', '4', '-0', '-1', '-r', String(address)].concat([
      '127.0.0.1',
      String(value),
    ]),
  );
}

const PYMODBUS_SCRIPT = `
import json, sys, time
from pymodbus.client import ModbusTcpClient
port, address, count, reads, write = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
c = ModbusTcpClient('127.0.0.1', port=port, timeout=5, retries=0)
if not c.connect():
    print(json.dumps({'error': 'no connection'})); sys.exit(1)
out = {'reads': []}
for _ in range(reads):
    r = c.read_input_registers(address, count, slave=1)
    out['reads'].append(r.registers if not r.isError() else {'exception': getattr(r, 'exception_code', None)})
    time.sleep(0.2)
if write != '-':
    at, value = (int(x) for x in write.split(':'))
    w = c.write_registers(at, [value], slave=1)
    out['write'] = 'ok' if not w.isError() else {'exception': getattr(w, 'exception_code', None)}
c.close()
print(json.dumps(out))
`;

/** pymodbus reading input registers `reads` times on one connection, then (with `write`) FC16 of one holding register. */
export async function pymodbus(
  port: number,
  address: number,
  count: number,
  reads: number,
  write?: { address: number; value: number },
): Promise<{ reads: (number[] | { exception: number })[]; write?: 'ok' | { exception: number } }> {
  const r = await run(
    PYTHON,
    ['-c', PYMODBUS_SCRIPT, String(port), String(address), String(count), String(reads)].concat(
      write === undefined ? '-' : `${write.address}:${write.value}`,
    ),
    20_000 + reads * 1000,
  );
  const line = r.out.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`pymodbus: ${r.out.slice(-800)}`);
  }
}
