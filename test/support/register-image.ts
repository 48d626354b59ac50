/**
 * The golden corpus's device side: a register image written value by value from a public register
 * document (test/fixtures/devices/*.yaml), served over real Modbus TCP the way the device would.
 *
 * The encoding here is deliberately the test's own (Buffer's IEEE 754 and two's complement
 * writers), not the gateway's codecs: a fixture must not pass because encoder and decoder share a
 * mistake. Registers a fixture does not list read 0, as unused registers of most devices do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerTCP } from 'modbus-serial';
import { parse } from 'yaml';
import { RegisterBank } from '../../src/sim/bank.js';
import type { SimRegisters } from '../../src/sim/registers.js';
import { listen } from '../../src/sim/servers.js';
import { simVector } from '../../src/sim/vector.js';

export type ImageType = 'u16' | 's16' | 'sunssf' | 'u32' | 's32' | 'acc32' | 'f32' | 'string' | 'words';

export interface ImageRegister {
  fn: 'holding' | 'input';
  address: number;
  type: ImageType;
  /** the raw value as the document defines it (before any scale or gain); text for 'string' */
  value?: number | string;
  /** 'words' only: the 16-bit words as they go on the wire */
  words?: number[];
  /** 'string' only: registers the text occupies (padded with NUL) */
  length?: number;
  /** the register's name in the source (number and label), so a reader can check it there */
  name: string;
}

export interface FixtureDevice {
  id: string;
  role: 'inverter' | 'battery' | 'grid-meter' | 'consumption-meter';
  profile: string;
  /** extra site.yaml keys of the device (e.g. a sign option) */
  options?: Record<string, unknown>;
}

export interface DeviceFixture {
  /** the file's base name */
  name: string;
  title: string;
  sources: { title: string; url: string; version?: string; commit?: string }[];
  devices: FixtureDevice[];
  image: { unitId: number; wordOrder: 'big' | 'little'; registers: ImageRegister[] };
  expect: {
    identity?: Record<string, { manufacturer?: string; model?: string; serial?: string }>;
    /** stream id → the values a person reads off the source for the first closed bucket; null = the channel is absent */
    streams: Record<string, Record<string, number | string | null>>;
    /** every sensor id of the expanded topology, when the fixture is about which streams exist */
    sensors?: string[];
    /**
     * stream id → the live channels (grid frequency, phase values, DC values, temperature, status;
     * docs/design.md "Live channels") a person reads off the source, as the live view must show them
     */
    live?: Record<string, Record<string, number | string>>;
  };
}

const TYPES = new Set<ImageType>(['u16', 's16', 'sunssf', 'u32', 's32', 'acc32', 'f32', 'string', 'words']);

function fail(file: string, what: string): never {
  throw new Error(`${file}: ${what}`);
}

function int(file: string, r: ImageRegister, min: number, max: number): number {
  const v = r.value;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    fail(file, `${r.name}: ${r.type} value ${String(v)} is not an integer in ${min}..${max}`);
  return v;
}

function pair(hi: number, lo: number, order: 'big' | 'little'): number[] {
  return order === 'big' ? [hi, lo] : [lo, hi];
}

/** The register's words on the wire. */
export function encode(file: string, r: ImageRegister, order: 'big' | 'little'): number[] {
  const buf = Buffer.alloc(4);
  switch (r.type) {
    case 'u16':
      return [int(file, r, 0, 0xffff)];
    case 's16':
    case 'sunssf':
      buf.writeInt16BE(int(file, r, -0x8000, 0x7fff));
      return [buf.readUInt16BE(0)];
    case 'u32':
    case 'acc32':
      buf.writeUInt32BE(int(file, r, 0, 0xffffffff));
      return pair(buf.readUInt16BE(0), buf.readUInt16BE(2), order);
    case 's32':
      buf.writeInt32BE(int(file, r, -0x80000000, 0x7fffffff));
      return pair(buf.readUInt16BE(0), buf.readUInt16BE(2), order);
    case 'f32':
      if (typeof r.value !== 'number') fail(file, `${r.name}: f32 needs a number`);
      buf.writeFloatBE(r.value);
      if (buf.readFloatBE(0) !== r.value)
        fail(
          file,
          `${r.name}: ${r.value} is not exactly representable as float32; write the value the meter would hold`,
        );
      return pair(buf.readUInt16BE(0), buf.readUInt16BE(2), order);
    case 'string': {
      if (typeof r.value !== 'string' || !r.length) fail(file, `${r.name}: string needs value and length`);
      const bytes = Buffer.alloc(r.length * 2);
      if (Buffer.byteLength(r.value, 'latin1') > bytes.length)
        fail(file, `${r.name}: '${r.value}' is longer than ${r.length} registers`);
      bytes.write(r.value, 'latin1');
      return Array.from({ length: r.length }, (_, i) => bytes.readUInt16BE(i * 2));
    }
    case 'words':
      if (!r.words?.length || r.words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff))
        fail(file, `${r.name}: words must be 16-bit values`);
      return r.words;
  }
}

/** One bank per function, from the lowest to the highest listed register; the rest reads 0. */
export function imageRegisters(f: DeviceFixture): SimRegisters {
  const banks: SimRegisters = { holding: [], input: [] };
  for (const fn of ['holding', 'input'] as const) {
    const words = f.image.registers
      .filter((r) => r.fn === fn)
      .map((r) => ({ r, w: encode(f.name, r, f.image.wordOrder) }));
    if (words.length === 0) continue;
    const start = Math.min(...words.map((x) => x.r.address));
    const end = Math.max(...words.map((x) => x.r.address + x.w.length));
    const bank = new RegisterBank(start, end - start);
    const owner = new Map<number, string>();
    for (const { r, w } of words) {
      for (let i = 0; i < w.length; i++) {
        const had = owner.get(r.address + i);
        if (had) fail(f.name, `${r.name} overlaps ${had} at ${fn} ${r.address + i}`);
        owner.set(r.address + i, r.name);
      }
      bank.write(r.address, w);
    }
    (banks[fn] as RegisterBank[]).push(bank);
  }
  return banks;
}

export function loadFixture(file: string): DeviceFixture {
  const raw = parse(readFileSync(file, 'utf8')) as Omit<DeviceFixture, 'name'>;
  const name = basename(file).replace(/\.yaml$/, '');
  if (!raw?.title || !Array.isArray(raw.sources) || raw.sources.length === 0)
    fail(name, 'needs a title and at least one source');
  for (const s of raw.sources)
    if (!s.title || !/^https:\/\//.test(s.url ?? '')) fail(name, `source '${s.title}' needs a title and an https URL`);
  if (!raw.devices?.length || !raw.image?.registers?.length || !raw.expect?.streams)
    fail(name, 'needs devices, image.registers and expect.streams');
  if (raw.image.wordOrder !== 'big' && raw.image.wordOrder !== 'little') fail(name, 'image.wordOrder is big or little');
  for (const r of raw.image.registers) {
    if (!TYPES.has(r.type)) fail(name, `${r.name ?? r.address}: unknown type ${String(r.type)}`);
    if (r.fn !== 'holding' && r.fn !== 'input') fail(name, `${r.name}: fn is holding or input`);
    if (!r.name) fail(name, `register ${r.address} needs the source's name`);
  }
  return { name, ...raw };
}

export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/devices/', import.meta.url));

export function allFixtures(): DeviceFixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => loadFixture(join(FIXTURE_DIR, f)));
}

export interface ImageServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Serves the fixture's image at its unit id over Modbus TCP; other unit ids answer as a gateway with nobody behind it. */
export async function serveImage(f: DeviceFixture): Promise<ImageServer> {
  const regs = imageRegisters(f);
  const source = { unit: (_host: unknown, unitId: number) => (unitId === f.image.unitId ? regs : undefined) };
  const vector = simVector(source, 'inverter', () => {}, { transport: 'tcp' });
  const { server, port } = await listen(vector, '127.0.0.1', 0);
  return {
    host: '127.0.0.1',
    port,
    close: () => closeServer(server),
  };
}

function closeServer(server: ServerTCP): Promise<void> {
  const socks = (server as ServerTCP & { socks?: Map<{ destroy(): void }, unknown> }).socks;
  for (const s of socks?.keys() ?? []) s.destroy();
  return new Promise((r) => server.close(() => r()));
}
