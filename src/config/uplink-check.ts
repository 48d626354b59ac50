import type { Finding } from '../yaml/messages.js';
import { isRec } from '../yaml/parse.js';

/**
 * Rules of an MQTT connection (uplink, homeassistant) the schema cannot express: certificates
 * only with a TLS scheme, a client certificate with its key.
 */
export function uplinkFindings(uplink: unknown, out: Finding[], section: 'uplink' | 'homeassistant' = 'uplink'): void {
  if (!isRec(uplink) || !isRec(uplink.tls) || typeof uplink.url !== 'string') return;
  const tls = uplink.tls;
  const secure = /^(mqtts|wss):\/\//.test(uplink.url);
  for (const key of ['ca', 'cert', 'key'] as const) {
    if (tls[key] !== undefined && !secure) {
      out.push({
        segments: [section, 'tls', key],
        anchor: [section, 'tls', key],
        message: `a certificate file is given but the url ${uplink.url.replace(/\/\/[^@/]*@/, '//')} does not use TLS`,
        hint: `use an mqtts:// or wss:// url, or remove ${section}.tls`,
      });
      return;
    }
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    const given = tls.cert !== undefined ? 'cert' : 'key';
    const missing = given === 'cert' ? 'key' : 'cert';
    out.push({
      segments: [section, 'tls', missing],
      anchor: [section, 'tls', given],
      message: `${section}.tls.${given} is given without ${section}.tls.${missing}`,
      hint: 'a client certificate needs its private key: give both cert and key, or neither',
    });
  }
}
