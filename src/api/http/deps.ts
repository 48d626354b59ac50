import type { Database } from 'better-sqlite3';
import type { AuthService } from '../../auth/service.js';
import type { Control } from '../../control/control.js';
import type { Site } from '../../site/site.js';

/** What the HTTP routes use: the site registry, the store, and the token service. */
export interface ApiDeps {
  site: Site;
  db: Database;
  auth: AuthService;
  /** battery control: operation mode and plans (absent in tests that build the app alone) */
  control?: Control;
}
