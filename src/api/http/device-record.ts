import type { Static } from '@sinclair/typebox';
import type { Principal } from '../../auth/context.js';
import type { Control } from '../../control/control.js';
import type { DeviceState, Site } from '../../site/site.js';
import type { PublishEntry } from '../../store/publish-to.js';
import type { DeviceRecord } from './schemas.js';
import { publishToView } from './visibility.js';

/** A device as the list (and PATCH) shows it to this caller. */
export function deviceRecord(
  site: Site,
  d: DeviceState,
  p: Principal,
  publishTo: readonly PublishEntry[],
  control?: Control,
): Static<typeof DeviceRecord> {
  const storage = control?.isStorage(d) === true;
  return {
    deviceId: d.config.id,
    siteId: site.id,
    kind: d.kind,
    manufacturer: d.identity.manufacturer ?? null,
    model: d.identity.model ?? null,
    serial: d.identity.serial ?? null,
    online: d.online,
    lastSeen: d.lastSeen === null ? null : new Date(d.lastSeen).toISOString(),
    publishTo: publishToView(p, publishTo),
    ...(storage ? { operationMode: control!.modeOf(d.config.id), reserveSoc: control!.reserveOf(d.config.id) } : {}),
    // counts only: the messages name internal addresses a partner has no business seeing
    errors: { ...d.errors },
  };
}
