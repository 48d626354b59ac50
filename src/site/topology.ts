import { unitOf } from '../core/channels.js';
import { type StreamDef, streamIds } from '../core/streams.js';
import type { DeviceState, Site } from './site.js';

/** A topology node (docs/api.md "Topology"); not every field is on every node. */
export interface TopoNode {
  id: string;
  kind?: string;
  category?: string;
  currentType?: string;
  nodeType?: string;
  nodes?: TopoNode[];
  channels?: { id: string; unit: string }[];
  node?: { id: string; kind: string };
  maxCapacity_J?: number;
  leftCurrent?: string;
  rightCircuit?: TopoNode;
}

const AC = 'AC-three-phase';
const WH_TO_J = 3600;

/**
 * The site as a tree: root → logical home controller → {inverter with its DC circuit (BMS,
 * PV hub with PV arrays), connection point with the grid circuit, house load}. Compact mode
 * folds battery blocks into one `__bb_agg` BMS and optimisers into one `__dcm` PV array
 * (docs/api.md "GET /api/v1/sites/{siteId}/topology").
 */
export function buildTopology(site: Site, compact: boolean): TopoNode {
  const siteId = site.id;
  const home: TopoNode = {
    id: `${siteId}__home`,
    kind: 'circuit',
    category: 'logical',
    currentType: AC,
    nodeType: 'neutral',
    nodes: [],
  };
  for (const inv of site.byRole('inverter')) home.nodes!.push(inverterNode(site, inv, compact));
  for (const gm of site.byRole('grid-meter')) home.nodes!.push(connectionPointNode(site, gm));
  // the house load: its meters, or else the stream derived from the energy balance
  const house = { id: `${siteId}__house`, kind: 'circuit' };
  const loads = site.byRole('consumption-meter').map((m) => streamIds.consumptionMeter(m.config.id));
  const houseSensors = (loads.length > 0 ? loads : [streamIds.consumptionDerived(siteId)]).flatMap((id) =>
    sensor(site, id, house),
  );
  if (houseSensors.length > 0) {
    home.nodes!.push({ ...house, category: 'logical', currentType: AC, nodeType: 'neutral', nodes: houseSensors });
  }
  return { id: siteId, category: 'site', nodes: [home] };
}

function sensor(site: Site, streamId: string, measured: { id: string; kind: string }): TopoNode[] {
  const s: StreamDef | undefined = site.stream(streamId);
  if (!s) return [];
  return [
    {
      id: s.id,
      kind: 'sensor',
      channels: s.channels.map((c) => ({ id: c, unit: unitOf(c, site.config.api.socScale) })),
      node: measured,
    },
  ];
}

function inverterNode(site: Site, inv: DeviceState, compact: boolean): TopoNode {
  const id = inv.config.id;
  const dcNodes: TopoNode[] = [];
  const batteries = site.batteriesOf(id);
  const bms = (bmsId: string, capacityWh: number | undefined, streamId: string): TopoNode => ({
    id: bmsId,
    kind: 'BMS',
    category: 'behind-inverter',
    currentType: 'DC',
    nodeType: 'source-sink',
    ...(capacityWh !== undefined ? { maxCapacity_J: capacityWh * WH_TO_J } : {}),
    nodes: sensor(site, streamId, { id: bmsId, kind: 'BMS' }),
  });
  if (batteries.length > 0 && compact) {
    const capacities = batteries.map((b) => b.capacityWh);
    // the whole system's capacity only once every block has told its own
    const total = capacities.every((c) => c !== undefined) ? capacities.reduce((a, c) => a! + c!, 0) : undefined;
    dcNodes.push(bms(`${id}__bms`, total, streamIds.batteryAggregate(id)));
  } else {
    for (const b of batteries)
      dcNodes.push(bms(`${b.config.id}__bms`, b.capacityWh, streamIds.batteryBlock(b.config.id)));
  }
  const arrays: TopoNode[] = [];
  const pvArray = (arrayId: string, streamId: string): TopoNode => ({
    id: arrayId,
    kind: 'PV-array',
    category: 'behind-inverter',
    currentType: 'DC',
    nodeType: 'source',
    nodes: sensor(site, streamId, { id: arrayId, kind: 'PV-array' }),
  });
  if (compact || !inv.pvModules) arrays.push(pvArray(`${id}__pv`, streamIds.pvAggregate(id)));
  else for (let n = 1; n <= inv.pvModules; n++) arrays.push(pvArray(`${id}__pv${n}_array`, streamIds.pvModule(id, n)));
  dcNodes.push({
    id: `${id}__pvhub`,
    kind: 'circuit',
    category: 'logical',
    currentType: 'DC',
    nodeType: 'neutral',
    nodes: arrays,
  });

  return {
    id: `${id}__inverter`,
    kind: 'inverter',
    category: 'site',
    currentType: AC,
    nodeType: 'source-sink',
    leftCurrent: AC,
    rightCircuit: {
      id: `${id}__dc`,
      kind: 'circuit',
      category: 'behind-inverter',
      currentType: 'DC',
      nodeType: 'neutral',
      nodes: dcNodes,
    },
    nodes: sensor(site, streamIds.inverter(id), { id: `${id}__inverter`, kind: 'inverter' }),
  };
}

function connectionPointNode(site: Site, meter: DeviceState): TopoNode {
  const id = meter.config.id;
  const cpId = `${id}__cp`;
  return {
    id: cpId,
    kind: 'connection-point',
    category: 'grid',
    currentType: AC,
    nodeType: 'source-sink',
    leftCurrent: AC,
    rightCircuit: {
      id: `${site.id}__grid`,
      kind: 'circuit',
      category: 'grid',
      currentType: AC,
      nodeType: 'source-sink',
    },
    nodes: sensor(site, streamIds.gridMeter(id), { id: cpId, kind: 'connection-point' }),
  };
}
