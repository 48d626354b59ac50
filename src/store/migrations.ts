import type { Database } from 'better-sqlite3';
import { copyCredentialsFromMain, dropCredentialsFromMain } from './credentials.js';

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
  {
    description: 'token service: clients and their devices, site owner, codes, tokens; publishTo with its audit trail',
    up(db) {
      db.exec(`
        -- a removed client keeps its row (removed_at) so its id is never handed out again
        CREATE TABLE auth_clients (
          id            TEXT PRIMARY KEY,
          name          TEXT NOT NULL,
          secret_hash   TEXT,
          scopes        TEXT NOT NULL,
          redirect_uris TEXT NOT NULL,
          created_at    INTEGER NOT NULL,
          removed_at    INTEGER
        );

        CREATE TABLE auth_client_devices (
          client_id TEXT NOT NULL REFERENCES auth_clients(id),
          device_id TEXT NOT NULL,
          PRIMARY KEY (client_id, device_id)
        ) WITHOUT ROWID;

        CREATE TABLE auth_owner (
          id            INTEGER PRIMARY KEY CHECK (id = 1),
          username      TEXT NOT NULL,
          password_hash TEXT NOT NULL,
          updated_at    INTEGER NOT NULL
        );

        -- codes and tokens are stored as SHA-256 of their value, never the value itself
        CREATE TABLE auth_codes (
          hash           TEXT PRIMARY KEY,
          client_id      TEXT NOT NULL,
          redirect_uri   TEXT NOT NULL,
          redirect_given INTEGER NOT NULL,
          scopes         TEXT NOT NULL,
          code_challenge TEXT,
          nonce          TEXT,
          family         TEXT NOT NULL,
          auth_time      INTEGER NOT NULL,
          expires_at     INTEGER NOT NULL,
          used_at        INTEGER
        );

        CREATE TABLE auth_tokens (
          hash       TEXT PRIMARY KEY,
          kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
          client_id  TEXT NOT NULL,
          customer   INTEGER NOT NULL,
          scopes     TEXT NOT NULL,
          family     TEXT NOT NULL,
          auth_time  INTEGER,
          created_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL,
          rotated_at INTEGER,
          revoked_at INTEGER
        );
        CREATE INDEX auth_tokens_family ON auth_tokens (family);
        CREATE INDEX auth_tokens_client ON auth_tokens (client_id);

        CREATE TABLE publish_to (
          device_id TEXT NOT NULL,
          position  INTEGER NOT NULL,
          client_id TEXT NOT NULL,
          data      TEXT NOT NULL,
          PRIMARY KEY (device_id, client_id)
        ) WITHOUT ROWID;

        CREATE TABLE publish_to_audit (
          id        INTEGER PRIMARY KEY,
          ts        INTEGER NOT NULL,
          device_id TEXT NOT NULL,
          by_client TEXT NOT NULL,
          before    TEXT NOT NULL,
          after     TEXT NOT NULL
        );
      `);
    },
  },
  {
    description: 'dynamic tariffs: metadata, price values per interval, the key that signs page tokens',
    up(db) {
      db.exec(`
        CREATE TABLE tariffs (
          id         TEXT PRIMARY KEY,
          name       TEXT NOT NULL,
          currency   TEXT NOT NULL,
          timezone   TEXT NOT NULL,
          kind       TEXT NOT NULL CHECK (kind IN ('import', 'export', 'both')),
          created_at INTEGER NOT NULL
        );

        -- values never overlap within a tariff (checked on write); NULL = the kind has no such price
        CREATE TABLE tariff_values (
          tariff_id    TEXT NOT NULL REFERENCES tariffs(id),
          start_s      INTEGER NOT NULL,
          end_s        INTEGER NOT NULL CHECK (end_s > start_s),
          import_price REAL,
          export_price REAL,
          PRIMARY KEY (tariff_id, start_s)
        ) WITHOUT ROWID;

        -- one HMAC key per database: nextTokens stay valid across restarts and die with the data
        CREATE TABLE tariff_page_key (
          id  INTEGER PRIMARY KEY CHECK (id = 1),
          key BLOB NOT NULL
        );
      `);
    },
  },
  {
    description: 'grid events: relay state changes of the connection point',
    up(db) {
      db.exec(`
        CREATE TABLE grid_events (
          id        INTEGER PRIMARY KEY,
          device_id TEXT NOT NULL,
          ts        INTEGER NOT NULL,
          state     TEXT NOT NULL CHECK (state IN ('ok', 'not_present', 'unknown')),
          -- 0 for the first state seen (a baseline, never announced): it is what a restart resumes from
          announced INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX grid_events_by_device ON grid_events (device_id, ts);
      `);
    },
  },
  {
    description: 'MQTT uplink: outbox of messages not yet acknowledged by the broker, drop counters',
    up(db) {
      db.exec(`
        -- seq is the message's sequence number on the wire: AUTOINCREMENT never hands out a
        -- number twice, even after the rows before it were delivered and deleted
        CREATE TABLE uplink_outbox (
          seq        INTEGER PRIMARY KEY AUTOINCREMENT,
          topic      TEXT NOT NULL,
          body       TEXT NOT NULL,
          retain     INTEGER NOT NULL DEFAULT 0,
          created_at INTEGER NOT NULL
        );

        CREATE TABLE uplink_drops (
          id      INTEGER PRIMARY KEY CHECK (id = 1),
          by_age  INTEGER NOT NULL,
          by_size INTEGER NOT NULL,
          last_at INTEGER
        );
        INSERT INTO uplink_drops (id, by_age, by_size) VALUES (1, 0, 0);
      `);
      // numbers start above the wall clock's ms at creation, so a gateway whose database was
      // wiped continues above what it sent before and a consumer's de-duplication stays right
      db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('uplink_outbox', ?)").run(Date.now());
    },
  },
  {
    description: 'the bucket in progress of each stream, saved at a clean stop so a restart continues it',
    up(db) {
      db.exec(`
        CREATE TABLE open_buckets (
          stream INTEGER PRIMARY KEY REFERENCES streams(id),
          state  TEXT NOT NULL
        );
      `);
    },
  },
  {
    description:
      'dynamic tariffs belong to the client that created them; the values each client stored, for its daily quota',
    up(db) {
      db.exec(`
        -- NULL: created before owners were recorded. Who did is unknown, so such a tariff is left
        -- to the site owner (customer tokens) rather than guessed or opened to every partner
        ALTER TABLE tariffs ADD COLUMN owner_client TEXT;
        CREATE INDEX tariffs_by_owner ON tariffs (owner_client);

        -- one row per accepted write; rows older than the quota window are deleted on the next write
        CREATE TABLE tariff_writes (
          client_id   TEXT NOT NULL,
          at_ms       INTEGER NOT NULL,
          value_count INTEGER NOT NULL
        );
        CREATE INDEX tariff_writes_by_client ON tariff_writes (client_id, at_ms);
      `);
    },
  },
  {
    description:
      'addresses where an identity signed in successfully, exempt from its failed-attempt key across restarts',
    up(db) {
      db.exec(`
        CREATE TABLE known_addresses (
          identity TEXT NOT NULL,
          address  TEXT NOT NULL,
          at_ms    INTEGER NOT NULL,
          PRIMARY KEY (identity, address)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    description: 'battery control: operation mode per storage system, its plan and slots, the audit of register writes',
    up(db) {
      db.exec(`
        CREATE TABLE control_mode (
          device_id  TEXT PRIMARY KEY,
          mode       TEXT NOT NULL,
          changed_ms INTEGER NOT NULL,
          changed_by TEXT NOT NULL
        );
        -- one plan per storage system (docs/design.md "Control: operation mode and plans")
        CREATE TABLE control_plans (
          device_id  TEXT PRIMARY KEY,
          plan_id    TEXT NOT NULL,
          source     TEXT NOT NULL,
          created_ms INTEGER NOT NULL
        );
        CREATE TABLE control_slots (
          device_id  TEXT NOT NULL REFERENCES control_plans(device_id) ON DELETE CASCADE,
          start_ms   INTEGER NOT NULL,
          end_ms     INTEGER NOT NULL,
          mode       TEXT NOT NULL,
          power_w    INTEGER,
          target_soc REAL,
          status     TEXT NOT NULL,
          note       TEXT,
          PRIMARY KEY (device_id, start_ms)
        ) WITHOUT ROWID;
        -- every register write control made or, in dry-run, would have made
        CREATE TABLE control_writes (
          id        INTEGER PRIMARY KEY,
          at_ms     INTEGER NOT NULL,
          device_id TEXT NOT NULL,
          writer    TEXT NOT NULL,
          address   INTEGER NOT NULL,
          value     TEXT NOT NULL,
          read_back TEXT,
          dry_run   INTEGER NOT NULL
        );
        CREATE INDEX control_writes_by_device ON control_writes (device_id, at_ms);
      `);
    },
  },
  {
    description:
      'counter plausibility: when each counter was last read, what the power explains since it moved, the peak power; what devices told about themselves (PV modules), kept across restarts',
    up(db) {
      db.exec(`
        ALTER TABLE energy_state ADD COLUMN counter_ts INTEGER;
        ALTER TABLE energy_state ADD COLUMN budget_in REAL NOT NULL DEFAULT 0;
        ALTER TABLE energy_state ADD COLUMN budget_out REAL NOT NULL DEFAULT 0;
        ALTER TABLE energy_state ADD COLUMN peak_w REAL NOT NULL DEFAULT 0;

        -- learned at run time; a restart or a device asleep at night changes nothing of the topology
        CREATE TABLE device_facts (
          device     TEXT PRIMARY KEY,
          pv_modules INTEGER
        );
      `);
    },
  },
  {
    description:
      'the live channels each device reported (grid frequency, phase values, temperatures, status), kept across restarts',
    up(db) {
      db.exec(`
        -- JSON: stream id -> live channel ids; restored before the first poll so Home Assistant's entities stay
        ALTER TABLE device_facts ADD COLUMN live TEXT;
      `);
    },
  },
  {
    description:
      "battery control: the reserve state of charge of each storage system as Home Assistant or the API set it (docs/control.md 'The reserve'); each register's value before control first wrote it, for control release",
    up(db) {
      db.exec(`
        CREATE TABLE control_reserve (
          device_id  TEXT PRIMARY KEY,
          soc        REAL NOT NULL,
          changed_ms INTEGER NOT NULL,
          changed_by TEXT NOT NULL
        );
        -- one row per first write to a register range; kept until control release restored it
        CREATE TABLE control_originals (
          id        INTEGER PRIMARY KEY,
          device_id TEXT NOT NULL,
          unit_id   INTEGER NOT NULL,
          address   INTEGER NOT NULL,
          words     TEXT NOT NULL,
          read_ms   INTEGER NOT NULL
        );
        CREATE INDEX control_originals_by_device ON control_originals (device_id, unit_id, address);
      `);
    },
  },
  {
    description:
      'retention: PT15M buckets older than the kept years rolled up into hour rows (PT1H and P1D answerable for ever), and how far that has gone',
    up(db) {
      db.exec(`
        -- the columns of buckets; covered_ms is the hour's covered time, the weight of its means
        CREATE TABLE buckets_hour (
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

        -- hour rows exist only below rolled_until (s): a query above it reads the buckets alone
        CREATE TABLE retention_state (
          id            INTEGER PRIMARY KEY CHECK (id = 1),
          rolled_until  INTEGER NOT NULL
        );
        INSERT INTO retention_state (id, rolled_until) VALUES (1, 0);
      `);
    },
  },
  {
    description:
      "cloud plans: each cmd/plan requestId the gateway acted on and what it stored, so a command sent again is answered with the same plan instead of making a new one (docs/mqtt-contract.md 'Plans')",
    up(db) {
      db.exec(`
        CREATE TABLE control_plan_requests (
          request_id TEXT PRIMARY KEY,
          device_id  TEXT NOT NULL,
          -- NULL: the command removed the plan
          plan_id    TEXT,
          at_ms      INTEGER NOT NULL
        );
        CREATE INDEX control_plan_requests_by_age ON control_plan_requests (at_ms);
      `);
    },
  },
  {
    description:
      'credentials (clients, owner, codes, tokens, publishTo) moved to their own file, credentials.db, where damage to the buckets cannot reach them',
    up(db) {
      // again here for a database whose copy ran in openDatabase: INSERT OR IGNORE keeps it one copy
      copyCredentialsFromMain(db);
      dropCredentialsFromMain(db);
    },
  },
  {
    description:
      'site limits: the schedule of export, import and generation limits a partner or customer wrote (one per site)',
    up(db) {
      db.exec(`
        CREATE TABLE limit_schedule (
          id          INTEGER PRIMARY KEY CHECK (id = 1),
          schedule_id TEXT NOT NULL,
          source      TEXT NOT NULL,
          created_ms  INTEGER NOT NULL
        );
        CREATE TABLE limit_slots (
          start_ms      INTEGER NOT NULL PRIMARY KEY,
          end_ms        INTEGER NOT NULL,
          export_w      INTEGER,
          import_w      INTEGER,
          generation_w  INTEGER
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    description:
      'buckets of the last day kept in time order (buckets_recent), folded into buckets once a day: a close writes a page or two whatever the number of streams; buckets_all reads both',
    up(db) {
      // Nothing moves: the old table stays the archive (store/recent-buckets.ts), so this step is
      // one schema change however many years a site holds. The columns are the archive's: a
      // channel column added to one is added to both. k is the rowid (recent-buckets.ts STREAM_SPAN).
      db.exec(`
        CREATE TABLE buckets_recent (
          k          INTEGER PRIMARY KEY CHECK (k = start_s * 1048576 + stream),
          stream     INTEGER NOT NULL REFERENCES streams(id) CHECK (stream >= 0 AND stream < 1048576),
          start_s    INTEGER NOT NULL,
          covered_ms INTEGER NOT NULL,
          power_W    REAL,
          power_AC_W REAL,
          power_DC_W REAL,
          soc        REAL,
          soh        REAL,
          energy_in  REAL,
          energy_out REAL,
          state      TEXT
        );

        -- every bucket once, for SQL that wants all of them (tools, tests, control's measured
        -- power): a recent row wins over an archive row of the same key
        CREATE VIEW buckets_all AS
          SELECT stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state
          FROM buckets_recent
          UNION ALL
          SELECT * FROM buckets b
          WHERE NOT EXISTS (SELECT 1 FROM buckets_recent r WHERE r.k = b.start_s * 1048576 + b.stream);
      `);
    },
  },
  {
    description:
      "energy floors: the lifetime counts a save between two closes keeps (three numbers a stream), where it rewrote every stream's whole energy state",
    up(db) {
      // store/energy-state.ts EnergyFloor: a start takes the larger of a stream's floor and its state
      db.exec(`
        CREATE TABLE energy_floor (
          stream INTEGER PRIMARY KEY REFERENCES streams(id),
          in_wh  REAL NOT NULL,
          out_wh REAL NOT NULL,
          at_ms  INTEGER
        );
      `);
    },
  },
  {
    description:
      "uplink telemetry read from the buckets: a recent row's seq and written (the message it went out in), and the telemetry's durable ack position, where a close copied its message into the outbox (3 pages a close)",
    up(db) {
      // ADD COLUMN rewrites no row (store/uplink-telemetry.ts): NULL until a close with an uplink stamps them
      db.exec(`
        ALTER TABLE buckets_recent ADD COLUMN seq INTEGER;
        ALTER TABLE buckets_recent ADD COLUMN written INTEGER;
        CREATE TABLE uplink_sent (
          id  INTEGER PRIMARY KEY CHECK (id = 1),
          seq INTEGER NOT NULL
        );
        INSERT INTO uplink_sent (id, seq) VALUES (1, 0);
      `);
    },
  },
];

/** The schema version after which main holds no credentials (store/credentials.ts). */
export const CREDENTIALS_MOVED = 15;

export const SCHEMA_VERSION = MIGRATIONS.length;
