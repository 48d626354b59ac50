/**
 * An operation mode Home Assistant's select sends, or a reserve its number sends
 * (docs/home-assistant.md "Battery control"): the same checks as the API's PATCH, through
 * control's own functions, and a refusal is a log line, never a throw: anyone who may publish on
 * the broker can send anything here.
 */
import type { Control } from '../control/control.js';
import { ApiError } from '../core/errors.js';
import type { DeviceState } from '../site/site.js';
import type { OperationMode } from '../store/control.js';
import { storageRefusal } from '../store/storage-faults.js';
import { HA_OPERATION_MODES, type HaStorage, type Topics } from './discovery.js';

type Refusal = { ok: false; code: string; message: string; device?: DeviceState };

export type ModeCommandAnswer =
  | { ok: true; device: DeviceState; mode: OperationMode }
  /** `device`: the storage system the topic names, whose mode in force the select is told again */
  | Refusal;

export type ReserveCommandAnswer =
  | { ok: true; device: DeviceState; reserveSoc: number }
  /** `device`: the storage system the topic names, whose reserve in force the number is told again */
  | Refusal;

/** Who the audit and the log name for a change from Home Assistant. */
export const HA_WRITER = 'homeassistant';

/** The storage systems Home Assistant may set the mode and reserve of: none while control is off or not started. */
export function haStorages(control: Control | undefined): HaStorage[] {
  return control?.enabled
    ? control.storages().map((device) => ({ device, reserve: control.reserveRange(device.config.id) }))
    : [];
}

/** a retained command would be acted on again at every connection, long after it was meant */
export const RETAINED_REFUSAL = {
  ok: false,
  code: 'RETAINED_COMMAND',
  message: 'a retained command is not acted on',
} as const satisfies Refusal;

/** A store that refused a command's value: its named code (a check, a full or read-only disk), else FAILED. */
export function storeRefusal(e: unknown, what: string): Refusal {
  const named = e instanceof ApiError ? e : storageRefusal(e);
  if (named) return { ok: false, code: named.code, message: named.message };
  return { ok: false, code: 'FAILED', message: `storing the ${what} failed: ${(e as Error).message}` };
}

/** The storage system a command topic names, or why there is none. */
function target(
  control: Control | undefined,
  topicOf: (deviceId: string) => string,
  topic: string,
  retained: boolean,
): { control: Control; device: DeviceState } | Refusal {
  if (retained) return RETAINED_REFUSAL;
  const device = haStorages(control).find((s) => topicOf(s.device.config.id) === topic)?.device;
  if (!control || !device)
    return {
      ok: false,
      code: control?.enabled ? 'NOT_A_STORAGE' : 'CONTROL_DISABLED',
      message: control?.enabled
        ? 'no storage system has this command topic'
        : 'battery control is off on this gateway (control.enabled)',
    };
  return { control, device };
}

function refusal(device: DeviceState, e: unknown, what: string): Refusal {
  return { ...storeRefusal(e, what), device };
}

export function answerModeCommand(
  control: Control | undefined,
  topics: Topics,
  topic: string,
  payload: Buffer,
  retained: boolean,
): ModeCommandAnswer {
  const t = target(control, topics.modeCommand, topic, retained);
  if ('ok' in t) return t;
  const { device } = t;
  const mode = payload.toString('utf8').trim();
  if (!(HA_OPERATION_MODES as readonly string[]).includes(mode))
    return {
      ok: false,
      device,
      code: 'BAD_MODE',
      message: `'${mode.slice(0, 40)}' is not one of ${HA_OPERATION_MODES.join(', ')}`,
    };
  try {
    t.control.setMode(device, mode as OperationMode, HA_WRITER);
  } catch (e) {
    return refusal(device, e, 'mode');
  }
  return { ok: true, device, mode: mode as OperationMode };
}

/** A plain decimal number of percent, as Home Assistant's number sends it ("30", "30.0"); nothing else. */
const DECIMAL = /^-?\d{1,3}(\.\d{1,6})?$/;

export function answerReserveCommand(
  control: Control | undefined,
  topics: Topics,
  topic: string,
  payload: Buffer,
  retained: boolean,
): ReserveCommandAnswer {
  const t = target(control, topics.reserveCommand, topic, retained);
  if ('ok' in t) return t;
  const { device } = t;
  const text = payload.toString('utf8').trim();
  // Number('') is 0 and Number('0x1e') 30: only a decimal is a reserve
  if (!DECIMAL.test(text))
    return {
      ok: false,
      device,
      code: 'RESERVE_INVALID',
      message: `'${text.slice(0, 40)}' is not a number of percent`,
    };
  try {
    return { ok: true, device, reserveSoc: t.control.setReserve(device, Number(text), HA_WRITER) };
  } catch (e) {
    return refusal(device, e, 'reserve');
  }
}
