/**
 * A profile's `control:` map as the storage-control capability (src/core/storage-control.ts): the
 * writes of the commanded mode in the document's order, each compared with what the device holds
 * first, written only when it differs (holding registers may sit in flash) or when it (re)starts
 * the device's timer, and read back. A write the device does not keep stops the command there:
 * the later writes of a sequence build on the earlier ones (remote mode before the command).
 * docs/design.md "Control: operation mode and plans".
 */
import type { RegisterReader } from '../core/register-reader.js';
import type {
  CommandLife,
  RegisterWrite,
  RegisterWriter,
  StorageCommand,
  StorageControl,
} from '../core/storage-control.js';
import { encodeNumber, typeRange } from '../modbus/codec.js';
import type { DeviceProfile } from './compiled.js';
import { type CompiledControl, type CompiledControlWrite, modesOf, type StorageMode } from './control-compile.js';
import { readRange } from './registers.js';

export type ControlMapErrorCode = 'CONTROL_MODE_UNSUPPORTED' | 'CONTROL_POWER_INVALID';

/** A command the map cannot put on the device; nothing was written. */
export class ControlMapError extends Error {
  constructor(
    readonly code: ControlMapErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ControlMapError';
  }
}

/** StorageControl plus what the profile knows beyond the contract (all additions, none required by it). */
export interface ProfileStorageControl extends StorageControl {
  /** the unit the writes go to */
  readonly unitId: number;
  /** the modes the device's document gives; `apply` refuses the others */
  readonly modes: readonly StorageMode[];
  /** the device returns to its own logic by itself when the gateway goes quiet (else `control release` must) */
  readonly fallsBack: boolean;
  readonly source: CompiledControl['source'];
}

function same(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The raw value of one write for this command. */
function rawValue(w: CompiledControlWrite, command: StorageCommand, life: CommandLife): number {
  switch (w.value.kind) {
    case 'fixed':
      return w.value.raw;
    case 'lifetime':
      return w.value.unit === 'min' ? life.seconds / 60 : life.seconds;
    case 'power': {
      const powerW = 'powerW' in command ? command.powerW : 0;
      const { scale, sign, max } = w.value;
      const [lo, hi] = typeRange(w.type);
      let raw = powerW * scale;
      if (w.type !== 'f32') raw = Math.round(raw);
      if (max !== undefined) raw = Math.min(raw, max);
      raw *= sign;
      // a command beyond what the register holds is written as the most it holds, never wrapped
      return Math.min(hi, Math.max(lo, raw)) || 0;
    }
  }
}

/** The storage control of a device read through `profile` at `unitId`; undefined when the profile has no `control:` map. */
export function createProfileControl(profile: DeviceProfile, unitId: number): ProfileStorageControl | undefined {
  const map = profile.control;
  if (!map) return undefined;
  const unit = map.unitId ?? unitId;
  const life: CommandLife = { kind: map.life.kind, seconds: map.life.seconds };
  const what = `profile ${profile.name} control`;
  const read = (bus: RegisterReader, w: CompiledControlWrite, count: number) =>
    readRange(bus, unit, { fn: 'holding', address: w.address, count }, `${what}, ${w.label}`);
  // the value's width in registers, as encodeNumber writes it
  const width = (w: CompiledControlWrite) => encodeNumber(w.type, 0, w.order).length;
  const selfConsumptionRegisters = (map.modes['self-consumption'] ?? []).flatMap((w) =>
    Array.from({ length: width(w) }, (_, i) => w.address + i),
  );
  return {
    life,
    unitId: unit,
    selfConsumptionRegisters,
    modes: modesOf(map),
    fallsBack: map.fallsBack,
    power: map.power,
    source: map.source,
    async apply(bus: RegisterReader & RegisterWriter, command: StorageCommand): Promise<RegisterWrite[]> {
      const writes = map.modes[command.mode];
      if (!writes)
        throw new ControlMapError(
          'CONTROL_MODE_UNSUPPORTED',
          `${what}: the device's document gives no '${command.mode}' (it gives ${modesOf(map).join(', ')})`,
        );
      if ('powerW' in command && !(Number.isFinite(command.powerW) && command.powerW >= 0))
        throw new ControlMapError(
          'CONTROL_POWER_INVALID',
          `${what}: ${command.mode} powerW must be a finite number ≥ 0, got ${command.powerW}`,
        );
      const out: RegisterWrite[] = [];
      for (const w of writes) {
        const values = encodeNumber(w.type, rawValue(w, command, life), w.order);
        if (!w.refresh && same(await read(bus, w, values.length), values)) continue;
        await bus.writeHolding(unit, w.address, values);
        const readBack = await read(bus, w, values.length);
        out.push({ address: w.address, values, readBack });
        if (!same(readBack, values)) break;
      }
      return out;
    },
  };
}
