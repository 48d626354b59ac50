/**
 * The child of bench/packed-day.ts, run under the unit's node flags: a stream-day of 96 quarter
 * hours and five REAL columns read and written as JSON values' text two ways, in one process.
 * - rows: as the store keeps them now, one row a bucket, read with better-sqlite3's raw `all`;
 * - packed: one row a stream-day and one BLOB of 96 doubles a column, read with `get` and viewed
 *   as Float64Arrays (option (a) of bench/README.md "A day not asked before").
 * Each day is read once in a pass (none is asked twice in a row), four passes over 400 days.
 * Both give the same text, checked before timing.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// the build the store opens on this Node, as the parent had src/store/driver.ts choose it
const Database = require(process.argv[2]);
const DAYS = 400;
const N = 96;
const COLS = 5;
const PASSES = 4;
const db = new Database(':memory:');
db.exec(`CREATE TABLE rows (stream INTEGER, start_s INTEGER, c1 REAL, c2 REAL, c3 REAL, c4 REAL, c5 REAL,
  PRIMARY KEY (stream, start_s)) WITHOUT ROWID`);
db.exec(`CREATE TABLE packed (stream INTEGER, day INTEGER, c1 BLOB, c2 BLOB, c3 BLOB, c4 BLOB, c5 BLOB,
  PRIMARY KEY (stream, day)) WITHOUT ROWID`);
const insertRow = db.prepare('INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?)');
const insertDay = db.prepare('INSERT INTO packed VALUES (?, ?, ?, ?, ?, ?, ?)');
db.transaction(() => {
  for (let d = 0; d < DAYS; d++) {
    const cols = Array.from({ length: COLS }, () => new Float64Array(N));
    for (let i = 0; i < N; i++) {
      // to the cent, as a meter's values are: each number's text is new to V8's number-string cache
      const row = cols.map((c) => (c[i] = Math.round(Math.random() * 1e6) / 100));
      insertRow.run(1, d * 86_400 + i * 900, ...row);
    }
    insertDay.run(1, d, ...cols.map((c) => Buffer.from(c.buffer)));
  }
})();
const rowsOfDay = db
  .prepare('SELECT start_s, c1, c2, c3, c4, c5 FROM rows WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s')
  .raw();
const packedDay = db.prepare('SELECT c1, c2, c3, c4, c5 FROM packed WHERE stream = ? AND day = ?').raw();
const readRows = (d) => rowsOfDay.all(1, d * 86_400, (d + 1) * 86_400);
const readPacked = (d) => packedDay.get(1, d);
const KEYS = [',"a":', ',"b":', ',"c":', ',"d":', ',"e":'];

// index loops, as src/telemetry/entry.ts valuesText: an iterator allocates per step in the interpreter
function textFromRows(d) {
  const rows = readRows(d);
  let out = '';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    for (let j = 0; j < COLS; j++) {
      const v = r[1 + j];
      if (v !== null) out += KEYS[j] + `${v}`;
    }
  }
  return out;
}
function textFromPacked(d) {
  const r = readPacked(d);
  const cols = [];
  for (let j = 0; j < COLS; j++) cols.push(new Float64Array(r[j].buffer, r[j].byteOffset, r[j].length / 8));
  let out = '';
  for (let i = 0; i < N; i++) for (let j = 0; j < COLS; j++) out += KEYS[j] + `${cols[j][i]}`;
  return out;
}

for (let d = 0; d < DAYS; d++)
  if (textFromRows(d) !== textFromPacked(d)) throw new Error(`day ${d}: the two texts differ`);
const usPerDay = (f) => {
  const t = process.hrtime.bigint();
  for (let p = 0; p < PASSES; p++) for (let d = 0; d < DAYS; d++) f(d);
  return Number(process.hrtime.bigint() - t) / 1000 / (PASSES * DAYS);
};
const out = { readRows: [], readPacked: [], textRows: [], textPacked: [] };
for (let round = 0; round < 5; round++) {
  out.readRows.push(usPerDay(readRows));
  out.readPacked.push(usPerDay(readPacked));
  out.textRows.push(usPerDay(textFromRows));
  out.textPacked.push(usPerDay(textFromPacked));
}
process.stdout.write(`${JSON.stringify(out)}\n`);
