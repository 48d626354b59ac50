/**
 * Why a Modbus request failed, in the words an installer's troubleshooting table uses.
 * `protocol`: RTU, a well-formed frame arrived that does not fit the request (another function,
 * register count or unit): an answer after its timeout, or a second master on the line.
 */
export type ModbusErrorKind = 'timeout' | 'exception' | 'connection' | 'crc' | 'decode' | 'protocol';

export const MODBUS_ERROR_KINDS: readonly ModbusErrorKind[] = [
  'timeout',
  'exception',
  'connection',
  'crc',
  'decode',
  'protocol',
];

export class ModbusError extends Error {
  constructor(
    readonly kind: ModbusErrorKind,
    message: string,
    /** Modbus exception code, when kind is 'exception' */
    readonly exceptionCode?: number,
    /**
     * true when nothing went on the wire: the unit or link is backing off after earlier
     * failures. Health counts the failures that happened, not the polls that were skipped.
     */
    readonly skipped = false,
  ) {
    super(message);
    this.name = 'ModbusError';
  }
}

const EXCEPTION_TEXT: Record<number, string> = {
  1: 'illegal function',
  2: 'illegal data address',
  3: 'illegal data value',
  4: 'device failure',
  5: 'acknowledge',
  6: 'device busy',
  10: 'gateway path unavailable',
  11: 'gateway target did not respond',
};

export function exceptionError(code: number): ModbusError {
  return new ModbusError('exception', `exception ${code} (${EXCEPTION_TEXT[code] ?? 'unknown'})`, code);
}

/** Classify whatever modbus-serial (or a socket) threw. */
export function toModbusError(err: unknown): ModbusError {
  if (err instanceof ModbusError) return err;
  const e = err as { modbusCode?: unknown; errno?: unknown; code?: unknown; message?: unknown; name?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (typeof e?.modbusCode === 'number') return exceptionError(e.modbusCode);
  if (e?.errno === 'ETIMEDOUT' || e?.name === 'TransactionTimedOutError')
    return new ModbusError('timeout', 'no answer before the timeout');
  if (/crc/i.test(message)) return new ModbusError('crc', message);
  // modbus-serial's words for an answer that arrived but does not fit the request
  if (/data length error|unexpected data error/i.test(message)) return new ModbusError('decode', message);
  return new ModbusError('connection', message || 'connection failed');
}
