/** Who made a request, once its bearer token checked out. */
export interface Principal {
  clientId: string;
  /** the token was issued on the site owner's consent (authorization-code flow) */
  customer: boolean;
  scopes: ReadonlySet<string>;
  /** devices the caller sees: everything for the owner, the installer's assignment for a partner */
  devices: ReadonlySet<string> | 'all';
}
