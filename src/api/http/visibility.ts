/**
 * What a caller may see. The owner (a customer token) sees the whole site; a partner sees the
 * devices the installer assigned to it, and everything else answers exactly as if it did not
 * exist: filtered lists, a topology without it, empty telemetry. A stream belongs to the device
 * it is read from (an inverter's battery aggregate and PV streams belong to the inverter).
 */
import type { Principal } from '../../auth/context.js';
import type { Site } from '../../site/site.js';
import type { TopoNode } from '../../site/topology.js';
import type { PublishEntry } from '../../store/publish-to.js';

export function seesDevice(p: Principal, deviceId: string): boolean {
  return p.devices === 'all' || p.devices.has(deviceId);
}

export function seesStream(p: Principal, site: Site, streamId: string): boolean {
  const s = site.stream(streamId);
  return s !== undefined && seesDevice(p, s.deviceId);
}

/** A partner learns only its own entries of a publishTo list, not which other partners the owner chose. */
export function publishToView(p: Principal, list: readonly PublishEntry[]): PublishEntry[] {
  return p.customer ? [...list] : list.filter((e) => e.clientId === p.clientId);
}

function hasSensor(n: TopoNode): boolean {
  return (
    n.kind === 'sensor' ||
    (n.nodes ?? []).some(hasSensor) ||
    (n.rightCircuit !== undefined && hasSensor(n.rightCircuit))
  );
}

/**
 * The tree with the sensors the caller may not see removed, and every element left without a
 * visible sensor below it removed too. Parts that never held a sensor (the grid circuit) stay
 * with the element they belong to.
 */
export function filterTopology(root: TopoNode, visible: (streamId: string) => boolean): TopoNode {
  const prune = (n: TopoNode): TopoNode | undefined => {
    if (n.kind === 'sensor') return visible(n.id) ? n : undefined;
    if (!hasSensor(n)) return n;
    const nodes = n.nodes?.map(prune).filter((c): c is TopoNode => c !== undefined);
    const rightCircuit = n.rightCircuit && prune(n.rightCircuit);
    const kept = (nodes ?? []).some(hasSensor) || (rightCircuit !== undefined && hasSensor(rightCircuit));
    if (!kept) return undefined;
    const out: TopoNode = { ...n };
    if (n.nodes) out.nodes = nodes;
    if (rightCircuit) out.rightCircuit = rightCircuit;
    else delete out.rightCircuit;
    return out;
  };
  return { ...root, nodes: (root.nodes ?? []).map(prune).filter((c): c is TopoNode => c !== undefined) };
}
