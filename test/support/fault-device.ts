/**
 * A Modbus TCP device of the test's own, on raw sockets (not the project's simulator, not its
 * codecs): a register image the test writes with Buffer's own encoders and changes between polls
 * to make the device spike, step back, read a scale factor wrong, wrap, answer an exception,
 * vanish and come back as another device. Modbus Application Protocol V1.1b3: MBAP header
 * (transaction, protocol 0, length, unit), function 3 (holding) and 4 (input), exception answers
 * as function | 0x80 and the code.
 */
import { createServer, type Server, type Socket } from 'node:net';

type Fn = 'holding' | 'input';

export class FaultDevice {
  readonly regs: Record<Fn, Map<number, number>> = { holding: new Map(), input: new Map() };
  /** answer requests that touch this address with this exception code */
  readonly exceptions = new Map<string, number>();
  /** requests answered, by function */
  readonly served: Record<Fn, number> = { holding: 0, input: 0 };
  port = 0;
  private server: Server | null = null;

  get listening(): boolean {
    return this.server !== null;
  }
  private readonly sockets = new Set<Socket>();

  async listen(port = 0): Promise<this> {
    const server = createServer((s) => this.serve(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this;
  }

  /** the device is gone: connections reset, the port refuses */
  async vanish(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  /** back on the same port (with whatever image the test has written meanwhile) */
  async comeBack(): Promise<void> {
    await this.listen(this.port);
  }

  close(): Promise<void> {
    return this.vanish();
  }

  u16(fn: Fn, address: number, v: number): void {
    this.regs[fn].set(address, v & 0xffff);
  }

  s16(fn: Fn, address: number, v: number): void {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    this.u16(fn, address, b.readUInt16BE(0));
  }

  u32(fn: Fn, address: number, v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    this.u16(fn, address, b.readUInt16BE(0));
    this.u16(fn, address + 1, b.readUInt16BE(2));
  }

  f32(fn: Fn, address: number, v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatBE(v);
    this.u16(fn, address, b.readUInt16BE(0));
    this.u16(fn, address + 1, b.readUInt16BE(2));
  }

  /** ASCII, two characters a register, NUL padded to `regs` registers */
  text(fn: Fn, address: number, s: string, regs: number): void {
    const b = Buffer.alloc(regs * 2);
    b.write(s.slice(0, regs * 2), 'ascii');
    for (let i = 0; i < regs; i++) this.u16(fn, address + i, b.readUInt16BE(i * 2));
  }

  private serve(s: Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 7) {
        const len = buf.readUInt16BE(4);
        if (buf.length < 6 + len) break;
        const frame = buf.subarray(0, 6 + len);
        buf = buf.subarray(6 + len);
        s.write(this.answer(frame));
      }
    });
  }

  private answer(frame: Buffer): Buffer {
    const tx = frame.readUInt16BE(0);
    const unit = frame[6]!;
    const fc = frame[7]!;
    const reply = (pdu: Buffer) => {
      const head = Buffer.alloc(7);
      head.writeUInt16BE(tx, 0);
      head.writeUInt16BE(0, 2);
      head.writeUInt16BE(pdu.length + 1, 4);
      head[6] = unit;
      return Buffer.concat([head, pdu]);
    };
    const fn: Fn | undefined = fc === 3 ? 'holding' : fc === 4 ? 'input' : undefined;
    if (!fn || frame.length < 12) return reply(Buffer.from([fc | 0x80, 1]));
    const address = frame.readUInt16BE(8);
    const count = frame.readUInt16BE(10);
    if (count < 1 || count > 125) return reply(Buffer.from([fc | 0x80, 3]));
    for (let a = address; a < address + count; a++) {
      const code = this.exceptions.get(`${fn}:${a}`);
      if (code !== undefined) return reply(Buffer.from([fc | 0x80, code]));
    }
    this.served[fn]++;
    const pdu = Buffer.alloc(2 + count * 2);
    pdu[0] = fc;
    pdu[1] = count * 2;
    for (let i = 0; i < count; i++) pdu.writeUInt16BE(this.regs[fn].get(address + i) ?? 0, 2 + i * 2);
    return reply(pdu);
  }
}

/**
 * SunSpec devices written from the SunSpec Information Model Reference (json/model_1.json,
 * model_103.json, model_203.json of sunspec/models): "SunS" at 40000, common model 1 (L 66: Mn
 * 16, Md 16, Opt 8, Vr 8, SN 16, DA, Pad), then the device model and the end marker 0xFFFF, L 0.
 */
export const SUNSPEC_BASE = 40000;
/** first register of the device model's points (after its ID and L) */
export const MODEL_START = SUNSPEC_BASE + 2 + 2 + 66 + 2;

export function sunspecCommon(d: FaultDevice, id: { mn: string; md: string; sn: string }): void {
  d.u16('holding', SUNSPEC_BASE, 0x5375);
  d.u16('holding', SUNSPEC_BASE + 1, 0x6e53);
  d.u16('holding', SUNSPEC_BASE + 2, 1);
  d.u16('holding', SUNSPEC_BASE + 3, 66);
  const c = SUNSPEC_BASE + 4;
  d.text('holding', c, id.mn, 16);
  d.text('holding', c + 16, id.md, 16);
  d.text('holding', c + 40, '1.0', 8);
  d.text('holding', c + 48, id.sn, 16);
  d.u16('holding', c + 64, 1);
}

/** model `id` of length `len` after the common model, then the end marker */
export function sunspecModel(d: FaultDevice, id: number, len: number): void {
  d.u16('holding', MODEL_START - 2, id);
  d.u16('holding', MODEL_START - 1, len);
  d.u16('holding', MODEL_START + len, 0xffff);
  d.u16('holding', MODEL_START + len + 1, 0);
}

/** model 103 (three-phase inverter, L 50): W at 12, W_SF 13, WH acc32 at 22, WH_SF 24, St 36 */
export const M103 = { len: 50, W: 12, W_SF: 13, WH: 22, WH_SF: 24, St: 36 } as const;
/** model 203 (wye meter, L 105): W at 16, W_SF 20, TotWhExp acc32 at 36, TotWhImp at 44, TotWh_SF 52 */
export const M203 = {
  len: 105,
  PhVphA: 6,
  V_SF: 13,
  Hz: 14,
  W: 16,
  W_SF: 20,
  TotWhExp: 36,
  TotWhImp: 44,
  TotWh_SF: 52,
};
