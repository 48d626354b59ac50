/**
 * The CRC of Modbus RTU frames: CRC-16 with polynomial 0xA001 (0x8005 reflected), initial value
 * 0xFFFF, sent low byte first. MODBUS over Serial Line Specification and Implementation Guide
 * V1.02 (modbus.org), section 6.2.2 "CRC Generation".
 */
const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1;
    t[n] = c;
  }
  return t;
})();

export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ TABLE[(crc ^ bytes[i]!) & 0xff]!;
  return crc;
}

/** true when the last two bytes of bytes[start, end) are the CRC of the bytes before them */
export function crcOk(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start < 4) return false;
  return crc16(bytes, start, end - 2) === (bytes[end - 2]! | (bytes[end - 1]! << 8));
}
