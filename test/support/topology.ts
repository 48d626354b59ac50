import type { TopoNode } from '../../src/site/topology.js';

/** Every node of a topology tree, depth first: children and an element's `rightCircuit`. */
export function allNodes(n: TopoNode, out: TopoNode[] = []): TopoNode[] {
  out.push(n);
  for (const c of n.nodes ?? []) allNodes(c, out);
  if (n.rightCircuit) allNodes(n.rightCircuit, out);
  return out;
}

/** The sensor nodes (spec "Recommended use": collect every node with kind `sensor`). */
export const sensorsOf = (n: TopoNode): TopoNode[] => allNodes(n).filter((x) => x.kind === 'sensor');
