/**
 * What the device layer needs from a bus: read a block of holding (FC3) or input (FC4)
 * registers from one unit. TCP and RTU buses implement it over the wire; the simulator's history
 * pre-fill implements it over in-memory register images, so both paths run the same discovery
 * and decoding code.
 */
export interface RegisterReader {
  readHolding(unitId: number, address: number, length: number): Promise<number[]>;
  readInput(unitId: number, address: number, length: number): Promise<number[]>;
}
