import type { Database } from 'better-sqlite3';
import type { Site } from '../../site/site.js';

/** What the HTTP routes read: the site registry and the store. They never write to devices. */
export interface ApiDeps {
  site: Site;
  db: Database;
}
