import type { Database } from 'better-sqlite3';
import { bucketsFinal } from '../store/buckets.js';
import { BUCKET_MS, floorUtc, wholePeriods } from './align.js';
import { entriesSplit, resolveTelemetry, type TelemetryQuery, telemetryPeriods } from './query.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** One day's entries as JSON bytes, with where each entry starts. */
interface Part {
  /** the entries joined by commas: a view of `answer` */
  json: Buffer;
  /** `{"entries":[json]}`, the whole answer when a question asks this day and nothing else */
  answer: Buffer;
  /** per entry: its period's start (ms) */
  starts: number[];
  /** per entry: its byte offset in json; one more, json's length + 1, closes the last */
  offsets: number[];
}

/**
 * The telemetry answer's JSON, made from parts kept per day: a question not asked before
 * (another month, a window ending at another quarter hour, the first after a bucket closes) is
 * mostly days already answered, and a day whose buckets are all closed never changes. Its
 * entries' JSON is made once, on the first question that touches the day, and kept as bytes
 * with each entry's offset; later questions join whole days and cut part-days out of them. The
 * stream's newest day is kept too, until the stream's next bucket is written (every 15 minutes).
 *
 * A part is a UTC day of PT15M or PT1H periods (both align on UTC, src/telemetry/align.ts), or
 * one P1D period (a local day). It is kept while `bucketsFinal` (src/store/buckets.ts) says the
 * stream's buckets before its end are unchanged: a bucket written below the stream's newest,
 * or retention's roll-up, makes every part made before it void. Bounded in bytes, least recently
 * used out.
 */
export class AnswerParts {
  private readonly kept = new Map<string, { stamp: string; part: Part }>();
  private bytes = 0;
  made = 0;
  reused = 0;

  constructor(
    private readonly maxBytes = 4 * 1024 * 1024,
    /** periods read from the store in one go: a page of a streamed answer */
    private readonly periodsPerRead = 96,
  ) {}

  /**
   * The answer to `q`, `{"entries":[…]}`, as one Buffer: a question of one whole day gets the
   * day's kept bytes themselves (no copy), anything else its pieces joined.
   */
  answer(db: Database, q: TelemetryQuery): Buffer {
    const pieces = [...this.pieces(db, q)];
    const whole = pieces.length === 1 ? ANSWER_OF.get(pieces[0]!) : undefined;
    return whole ?? Buffer.concat([...framedAnswer(pieces)]);
  }

  /**
   * The entries of `q` as JSON bytes, in pieces (each entries joined by commas, never empty),
   * ascending: joined by commas and put in `{"entries":[…]}` they are the bytes of
   * `JSON.stringify({ entries: queryTelemetry(db, q) })`. Lazy: a piece is read when asked for.
   */
  *pieces(db: Database, q: TelemetryQuery): Generator<Buffer> {
    const resolved = resolveTelemetry(db, q);
    if (!resolved) return;
    const daily = q.resolution === 'P1D';
    const step = q.resolution === 'PT15M' ? BUCKET_MS : HOUR_MS;
    // P1D's bounds are listed (local days, 23 to 25 h); PT15M's and PT1H's are counted on the UTC
    // grid, never listed: a month of PT15M is 2,880 of them, each request
    const listed = daily ? wholePeriods(q.resolution, q.start, q.end, q.timezone).bounds : undefined;
    const first = floorUtc(q.start, step);
    const n = listed ? listed.length - 1 : telemetryPeriods(q);
    const at = (k: number) => (listed ? listed[k]! : first + k * step);
    const prep = { ...resolved, bounds: [] };
    const { finalBeforeMs, stamp } = bucketsFinal(db, prep.key);
    const shape = `${prep.key}|${q.deviceId}|${q.deviceKind}|${q.resolution}|${daily ? q.timezone : ''}|${prep.plan.shape.names.join(',')}|${prep.plan.shape.fractionAt}`;
    // days to read, in order, their periods chaining: the grid read, the part of it asked, the key to keep it by
    type Todo = { grid: number[]; from: number; to: number; key: string; stamp: string };
    let todo: Todo[] = [];
    let todoPeriods = 0;
    const self = this;
    function* read(): Generator<Buffer> {
      if (todo.length === 0) return;
      const grid = [todo[0]!.grid[0]!];
      const cuts = [0];
      for (const t of todo) {
        for (let k = 1; k < t.grid.length; k++) grid.push(t.grid[k]!);
        cuts.push(grid.length - 1);
      }
      const split = entriesSplit(db, prep!, q, grid, cuts);
      const batch = todo;
      todo = [];
      todoPeriods = 0;
      for (let k = 0; k < batch.length; k++) {
        const t = batch[k]!;
        const part = toPart(split[k]!.entries, split[k]!.starts);
        self.keep(t.key, t.stamp, part);
        const piece = cut(part, t.from, t.to);
        if (piece.length > 0) yield piece;
      }
    }
    for (let i = 0; i < n; ) {
      const from = at(i);
      const dayStart = daily ? from : Math.floor(from / DAY_MS) * DAY_MS;
      const dayEnd = daily ? at(i + 1) : dayStart + DAY_MS;
      // the periods of this day: counted on the UTC grid (a step divides a day)
      const j = daily ? i + 1 : Math.min(n, i + Math.round((dayEnd - from) / step));
      const to = at(j);
      // a day the stream's newest bucket is in (or before it) is kept only until the stream's next
      // bucket: its stamp names the newest bucket too
      const final = dayEnd <= finalBeforeMs;
      const key = `${shape}|${dayStart}`;
      const keptStamp = final ? stamp : `${stamp}@${finalBeforeMs}`;
      const part = this.get(key, keptStamp);
      if (part) {
        yield* read();
        const piece = cut(part, from, to);
        if (piece.length > 0) yield piece;
      } else {
        // the whole day is made (and kept) even when only part of it is asked
        const grid = daily ? [dayStart, dayEnd] : gridOf(dayStart, dayEnd, step);
        todo.push({ grid, from, to, key, stamp: keptStamp });
        todoPeriods += grid.length - 1;
      }
      if (todoPeriods >= this.periodsPerRead) yield* read();
      i = j;
    }
    yield* read();
  }

  get size(): { parts: number; bytes: number } {
    return { parts: this.kept.size, bytes: this.bytes };
  }

  private get(key: string, stamp: string): Part | undefined {
    const k = this.kept.get(key);
    if (!k) return undefined;
    this.kept.delete(key);
    if (k.stamp !== stamp) {
      this.bytes -= k.part.answer.length;
      return undefined;
    }
    // most recently used goes last
    this.kept.set(key, k);
    this.reused++;
    return k.part;
  }

  private keep(key: string, stamp: string, part: Part): void {
    const old = this.kept.get(key);
    if (old) {
      this.kept.delete(key);
      this.bytes -= old.part.answer.length;
    }
    this.kept.set(key, { stamp, part });
    this.bytes += part.answer.length;
    this.made++;
    for (const [k, e] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(k);
      this.bytes -= e.part.answer.length;
    }
  }
}

function gridOf(from: number, to: number, step: number): number[] {
  const g: number[] = [];
  for (let t = from; t <= to; t += step) g.push(t);
  return g;
}

/** each part's json view → its answer (the Buffer the view is of), for answer() */
const ANSWER_OF = new WeakMap<Buffer, Buffer>();

/** How an answer's entries are framed: `{"entries":[`, the entries joined by commas, `]}` */
export const ANSWER_OPEN = Buffer.from('{"entries":[');
export const ANSWER_CLOSE = Buffer.from(']}');
const COMMA = Buffer.from(',');

/**
 * The answer's bytes from its pieces (each entries joined by commas, never empty): the opening, the
 * pieces with a comma between two, the close. Lazy: a streamed answer (api/http/telemetry-body.ts)
 * takes a piece only as its client reads.
 */
export function* framedAnswer(pieces: Iterable<Buffer>): Generator<Buffer, void, undefined> {
  yield ANSWER_OPEN;
  let first = true;
  for (const p of pieces) {
    if (!first) yield COMMA;
    yield p;
    first = false;
  }
  yield ANSWER_CLOSE;
}

/** How every entry's JSON begins (src/telemetry/entry.ts writes deviceKind first). */
const ENTRY_START = '{"deviceKind":';

function toPart(entries: readonly object[], starts: number[]): Part {
  // one JSON.stringify of the day, not one per entry: the day's first touch is most of a fresh
  // question's own work (bench/README.md "A day not asked before"); and framed as the whole
  // answer, so a question of this day alone is sent as it is, where joining it again made a
  // second copy of the day's bytes. Entries are flat objects, so outside their strings (where a
  // quote is escaped) ENTRY_START only begins an entry
  const text = JSON.stringify({ entries });
  const answer = Buffer.from(text);
  // text other than ASCII (a device name's or state's) takes more bytes than characters
  if (answer.length !== text.length) return toPartByEntry(entries, starts);
  const offsets: number[] = [];
  for (let at = ANSWER_OPEN.length; offsets.length < entries.length; at++) {
    at = text.indexOf(ENTRY_START, at);
    if (at < 0) return toPartByEntry(entries, starts);
    offsets.push(at - ANSWER_OPEN.length);
  }
  return framed(answer, starts, offsets);
}

function toPartByEntry(entries: readonly object[], starts: number[]): Part {
  const offsets: number[] = [];
  let json = '';
  let at = 0;
  for (let e = 0; e < entries.length; e++) {
    const s = JSON.stringify(entries[e]);
    offsets.push(at);
    json += e === 0 ? s : `,${s}`;
    at += Buffer.byteLength(s) + 1;
  }
  return framed(Buffer.concat([ANSWER_OPEN, Buffer.from(json), ANSWER_CLOSE]), starts, offsets);
}

/** The part whose answer is `answer`, its entries at `offsets` (bytes, from the first entry). */
function framed(answer: Buffer, starts: number[], offsets: number[]): Part {
  const json = answer.subarray(ANSWER_OPEN.length, answer.length - ANSWER_CLOSE.length);
  offsets.push(json.length + 1);
  ANSWER_OF.set(json, answer);
  return { json, answer, starts, offsets };
}

/** The entries of `part` whose periods start in [from, to), as bytes (a view, not a copy). */
function cut(part: Part, from: number, to: number): Buffer {
  const { starts, offsets, json } = part;
  // a whole day, the common case: no walk over its entries
  if (starts.length === 0 || (from <= starts[0]! && to > starts[starts.length - 1]!)) return json;
  let a = 0;
  while (a < starts.length && starts[a]! < from) a++;
  let b = a;
  while (b < starts.length && starts[b]! < to) b++;
  if (a === 0 && b === starts.length) return json;
  return b > a ? json.subarray(offsets[a]!, offsets[b]! - 1) : json.subarray(0, 0);
}
