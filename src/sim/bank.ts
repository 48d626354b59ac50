/**
 * A holding-register image: one contiguous run of 16-bit registers at a fixed start address.
 * Anything outside answers with Modbus exception 2 (illegal data address), as a real device does
 * for registers it does not implement — discovery relies on that to tell "no SunSpec here".
 */

export const MODBUS_EXCEPTION = {
  ILLEGAL_FUNCTION: 0x01,
  ILLEGAL_DATA_ADDRESS: 0x02,
  ILLEGAL_DATA_VALUE: 0x03,
  SERVER_DEVICE_FAILURE: 0x04,
  GATEWAY_TARGET_FAILED: 0x0b,
} as const;

/** The shape modbus-serial's server turns into an exception response (`modbusErrorCode`). */
export class ModbusException extends Error {
  constructor(
    readonly modbusErrorCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ModbusException';
  }
}

export class RegisterBank {
  readonly regs: Uint16Array;

  constructor(
    readonly start: number,
    length: number,
  ) {
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(length) || length < 1 || start + length > 0x10000) {
      throw new RangeError(`register bank ${start}+${length} does not fit the 16-bit address space`);
    }
    this.regs = new Uint16Array(length);
  }

  get length(): number {
    return this.regs.length;
  }

  /** first address past the image */
  get end(): number {
    return this.start + this.regs.length;
  }

  contains(addr: number, len = 1): boolean {
    return Number.isInteger(addr) && Number.isInteger(len) && len >= 1 && addr >= this.start && addr + len <= this.end;
  }

  read(addr: number, len: number): number[] {
    if (!this.contains(addr, len)) {
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
        `registers ${addr}..${addr + len - 1} are outside ${this.start}..${this.end - 1}`,
      );
    }
    const from = addr - this.start;
    return Array.from(this.regs.subarray(from, from + len));
  }

  /** raw write of 16-bit words at an absolute address (the encoder's only way in) */
  write(addr: number, words: ArrayLike<number>): void {
    if (!this.contains(addr, words.length)) throw new RangeError(`write ${addr}+${words.length} outside the bank`);
    this.regs.set(words, addr - this.start);
  }
}
