/**
 * A device profile as written in device-profiles/<name>.yaml, after schema validation, read off
 * src/profiles/schema.ts (the rules); src/profiles/compile.ts turns this into the engine's
 * resolved form (PDU addresses, units folded into factors, defaults applied). The names below are
 * views of that one type, not second definitions.
 */
import type { DeviceRole } from '../core/device-role.js';
import type { Infer } from '../yaml/schema.js';
import type { profileSchema, SourceNode, STATE_SPEC } from './schema.js';

export type ProfileFile = Infer<typeof profileSchema>;

type Defs = (typeof profileSchema)['$defs'];

/** A value that feeds a channel, a counter or the battery capacity. */
export type SourceSpec = Infer<SourceNode, Defs>;
/** Where a value lives and how its bits read. */
export type RegisterSpec = Infer<Defs['scaleFactor'], Defs>;
export type RegisterFunction = NonNullable<RegisterSpec['function']>;
export type StateSpec = Infer<typeof STATE_SPEC>;

/** Every key any role may have, each optional: what compile.ts walks for whichever role it is given. */
type Merged<U> = { [K in U extends unknown ? keyof U : never]?: U extends { [P in K]?: infer V } ? V : never };
export type RoleSpec = Merged<NonNullable<ProfileFile['roles'][DeviceRole]>>;

/** A role's status register with its table (state → raw codes). */
export type StatusSpec = NonNullable<RoleSpec['status']>;
/** One PV string of the inverter's `pv.strings`. */
export type PvStringSpec = NonNullable<NonNullable<RoleSpec['pv']>['strings']>[number];

export type IdentifySpec = ProfileFile['identify'];
export type MatchSpec = IdentifySpec['match'][number];
export type IdentityRegister = NonNullable<NonNullable<IdentifySpec['registers']>['model']>;

/** The `control:` section: per storage mode the register writes, and the command's life. */
export type ControlSpec = NonNullable<ProfileFile['control']>;
export type ControlWriteSpec = NonNullable<ControlSpec['modes']['hold']>[number];

/** The `limit:` section: the active power limit's registers, per kind (output, device-export-limit). */
export type LimitSpec = NonNullable<ProfileFile['limit']>;
export type LimitMapSpec = NonNullable<LimitSpec['output']>;
