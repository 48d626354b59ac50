/**
 * An operation mode Home Assistant's select sends (docs/home-assistant.md "Battery control"):
 * the same checks as the API's PATCH, through control's own functions, and a refusal is a log
 * line, never a throw: anyone who may publish on the broker can send anything here.
 */
import type { Control } from '../control/control.js';
import { ApiError } from '../core/errors.js';
import type { DeviceState } from '../site/site.js';
import type { OperationMode } from '../store/control.js';
import { HA_OPERATION_MODES, type Topics } from './discovery.js';

export type ModeCommandAnswer =
  | { ok: true; device: DeviceState; mode: OperationMode }
  /** `device`: the storage system the topic names, whose mode in force the select is told again */
  | { ok: false; code: string; message: string; device?: DeviceState };

/** Who the audit and the log name for a change from Home Assistant. */
export const HA_WRITER = 'homeassistant';

/** The storage systems Home Assistant may set the mode of: none while control is off or not started. */
export function haStorages(control: Control | undefined): DeviceState[] {
  return control?.enabled ? control.storages() : [];
}

export function answerModeCommand(
  control: Control | undefined,
  topics: Topics,
  topic: string,
  payload: Buffer,
  retained: boolean,
): ModeCommandAnswer {
  // a retained command would be acted on again at every connection, long after it was meant
  if (retained)
    return { ok: false, code: 'RETAINED_COMMAND', message: 'a retained operation mode command is not acted on' };
  const device = haStorages(control).find((d) => topics.modeCommand(d.config.id) === topic);
  if (!control || !device)
    return {
      ok: false,
      code: control?.enabled ? 'NOT_A_STORAGE' : 'CONTROL_DISABLED',
      message: control?.enabled
        ? 'no storage system has this command topic'
        : 'battery control is off on this gateway (control.enabled)',
    };
  const mode = payload.toString('utf8').trim();
  if (!(HA_OPERATION_MODES as readonly string[]).includes(mode))
    return {
      ok: false,
      device,
      code: 'BAD_MODE',
      message: `'${mode.slice(0, 40)}' is not one of ${HA_OPERATION_MODES.join(', ')}`,
    };
  try {
    control.setMode(device, mode as OperationMode, HA_WRITER);
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, device, code: e.code, message: e.message };
    return { ok: false, device, code: 'FAILED', message: `storing the mode failed: ${(e as Error).message}` };
  }
  return { ok: true, device, mode: mode as OperationMode };
}
