import type { Finding } from '../yaml/messages.js';
import { isRec } from '../yaml/parse.js';
import { closest } from '../yaml/suggest.js';

/**
 * Rules of `modbusProxy:` the schema cannot express: a target that names a device of the file,
 * one entry per port, and no port the API already listens on.
 */
export function proxyFindings(data: Record<string, unknown>, out: Finding[]): void {
  const list = data.modbusProxy;
  if (!Array.isArray(list)) return;
  const ids = Array.isArray(data.devices)
    ? data.devices.flatMap((d) => (isRec(d) && typeof d.id === 'string' ? [d.id] : []))
    : [];
  const apiPort = isRec(data.http) && typeof data.http.port === 'number' ? data.http.port : 8080;
  const seen = new Map<number, number>();
  list.forEach((entry, i) => {
    if (!isRec(entry)) return;
    const { target, port } = entry;
    if (typeof target === 'string' && !ids.includes(target)) {
      const at = ['modbusProxy', i, 'target'];
      const suggestion = closest(target, ids);
      out.push({
        segments: at,
        anchor: at,
        message: `no device with id '${target}' in this file`,
        hint: suggestion ? `did you mean '${suggestion}'?` : `name one of the devices: ${ids.join(', ')}`,
      });
    }
    if (typeof port !== 'number') return;
    const at = ['modbusProxy', i, 'port'];
    const first = seen.get(port);
    if (first !== undefined)
      out.push({
        segments: at,
        anchor: at,
        message: `port ${port} is already used by modbusProxy[${first}]`,
        hint: 'give every shared device its own port',
      });
    else if (port === apiPort)
      out.push({
        segments: at,
        anchor: at,
        message: `port ${port} is the API's port (http.port)`,
        hint: 'use another port, e.g. 1502',
      });
    seen.set(port, first ?? i);
  });
}
