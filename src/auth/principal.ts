/** Who made a request, once its bearer token checked out. */
export interface Principal {
  clientId: string;
  /** the token was issued on the site owner's consent (authorization-code flow) */
  customer: boolean;
  scopes: ReadonlySet<string>;
  /** devices the caller sees: everything for the owner, the installer's assignment for a partner */
  devices: ReadonlySet<string> | 'all';
}

/**
 * A partner's devices: those the installer assigned, and with an inverter the devices behind it
 * (its battery blocks; its PV modules are streams of the inverter itself), so the compact
 * topology's battery aggregate and the expanded one's blocks are seen together (docs/design.md
 * "partner vs customer").
 */
export function partnerDevices(
  assigned: readonly string[],
  behind: (deviceId: string) => readonly string[],
): Set<string> {
  return new Set(assigned.flatMap((d) => [d, ...behind(d)]));
}
