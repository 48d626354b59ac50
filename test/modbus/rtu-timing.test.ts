/**
 * RTU character and frame times, MODBUS over Serial Line V1.02 §2.5.1 (a character is a start
 * bit, 8 data bits, a parity bit or none, and 1 or 2 stop bits: 11 bits in the default 8E1) and
 * §2.5.1.1 (3.5 character times between frames, a fixed 1.75 ms above 19200 baud).
 */
import { describe, expect, it } from 'vitest';
import { characterBits, interFrameDelayMs, wireTimeMs } from '../../src/modbus/rtu-timing.js';

describe('RTU timing', () => {
  it('counts the bits of a character', () => {
    expect(characterBits('even', 1)).toBe(11);
    expect(characterBits('none', 2)).toBe(11);
    expect(characterBits('none', 1)).toBe(10);
  });

  it('gives the wire time of a frame: a read of 2 registers (8 + 9 bytes) at 9600 8E1 is 19.5 ms', () => {
    expect(wireTimeMs(17, 9600, 'even', 1)).toBeCloseTo((17 * 11 * 1000) / 9600, 9);
    expect(wireTimeMs(17, 9600, 'even', 1)).toBeCloseTo(19.48, 2);
    // twice the speed, half the time; 8N1 is a tenth shorter than 8E1
    expect(wireTimeMs(17, 19200, 'even', 1)).toBeCloseTo(wireTimeMs(17, 9600, 'even', 1) / 2, 9);
    expect(wireTimeMs(100, 9600)).toBeCloseTo(104.17, 2);
  });

  it('keeps 3.5 characters between frames up to 19200 baud, 1.75 ms above', () => {
    expect(interFrameDelayMs(9600, 'even', 1)).toBeCloseTo(4.01, 2);
    expect(interFrameDelayMs(19200)).toBeCloseTo(1.82, 2);
    expect(interFrameDelayMs(38400)).toBe(1.75);
  });
});
