/**
 * RTU frame timing, MODBUS over Serial Line V1.02 §2.5.1.1: frames are separated by a silence of
 * at least 3.5 character times; above 19200 baud a fixed 1.75 ms is recommended instead.
 */
export function characterBits(parity: 'none' | 'even' | 'odd', stopBits: number): number {
  return 1 + 8 + (parity === 'none' ? 0 : 1) + stopBits;
}

export function interFrameDelayMs(baudRate: number, parity: 'none' | 'even' | 'odd' = 'none', stopBits = 1): number {
  if (baudRate > 19200) return 1.75;
  return (3.5 * characterBits(parity, stopBits) * 1000) / baudRate;
}

/** How long `bytes` characters take on the wire at this line setting, ms (a pty pair carries them at once). */
export function wireTimeMs(
  bytes: number,
  baudRate: number,
  parity: 'none' | 'even' | 'odd' = 'none',
  stopBits = 1,
): number {
  return (bytes * characterBits(parity, stopBits) * 1000) / baudRate;
}
