/**
 * Imported first by the CLI, so it runs before any other module is evaluated: on a Node the
 * gateway cannot serve, or where the SQLite driver does not load, the start ends with one line
 * and exit 1 instead of an error deep in start-up or a native abort later (src/store/driver.ts).
 */
import { DriverUnavailableError, sqliteDriver } from './store/driver.js';

try {
  sqliteDriver();
} catch (err) {
  if (!(err instanceof DriverUnavailableError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
