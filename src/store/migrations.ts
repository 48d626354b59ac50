import type { Database } from 'better-sqlite3';

/**
 * Schema history, oldest first. Version N is the state after MIGRATIONS[N-1] ran; the number is
 * kept in `PRAGMA user_version`. Entries are only ever appended: an edited or reordered entry
 * would leave existing sites with a schema that no code path produced.
 */
export interface Migration {
  /** one line for logs and for a human reading this file */
  readonly description: string;
  readonly up: (db: Database) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    description: 'streams, 15-minute buckets, energy tracker state',
    up(db) {
      db.exec(`
        CREATE TABLE streams (
          id  INTEGER PRIMARY KEY,
          key TEXT NOT NULL UNIQUE
        );

        -- One column per spec channel so a range scan needs no pivot; NULL = channel absent.
        -- energy_in/energy_out hold the spec values (increment >= 0, decrement <= 0).
        CREATE TABLE buckets (
          stream     INTEGER NOT NULL REFERENCES streams(id),
          start_s    INTEGER NOT NULL,
          covered_ms INTEGER NOT NULL,
          power_W    REAL,
          power_AC_W REAL,
          power_DC_W REAL,
          soc        REAL,
          soh        REAL,
          energy_in  REAL,
          energy_out REAL,
          state      TEXT,
          PRIMARY KEY (stream, start_s)
        ) WITHOUT ROWID;

        CREATE TABLE energy_state (
          stream           INTEGER PRIMARY KEY REFERENCES streams(id),
          in_wh            REAL NOT NULL,
          out_wh           REAL NOT NULL,
          raw_in           REAL,
          raw_out          REAL,
          offset_in        REAL NOT NULL,
          offset_out       REAL NOT NULL,
          held_power_w     REAL,
          held_ts          INTEGER,
          integrated_until INTEGER,
          closed_until     INTEGER
        );
      `);
    },
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;
