/**
 * The telemetry endpoint's answers, serialised, for as long as the buckets they were read from
 * are unchanged. Partners poll the same day again and again (a dashboard every minute, an energy
 * manager every poll); building that answer (SQLite rows, entry objects, JSON of 20 kB for a day
 * of PT15M) costs several times what the rest of the request does, and on a Pi's CPU the
 * repeated read would take the time the poller needs (bench/README.md "Footprint").
 *
 * Bounded in bytes, least recently used first out; an answer larger than a tenth of the bound
 * (a month of PT15M) is not kept, so one large read cannot empty the cache of the common ones.
 *
 * An answer is kept from its second question on: the first is made by `once`, without keeping
 * anything but its key. A question not asked before is mostly one not asked again soon (a
 * partner stepping back day by day, each stream's day once after a close), and keeping its 20 kB
 * cost more than making it: under the unit's flags a Buffer kept per question brought a
 * mark-compact of the whole heap every ~7 MB of them (bench/README.md "A day not asked before").
 */
export class AnswerCache {
  private readonly entries = new Map<string, { generation: number; body: Buffer }>();
  /** keys asked once and not kept, oldest first */
  private readonly asked = new Set<string>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes = 2 * 1024 * 1024,
    /**
     * keys remembered as asked once: a few more than the one-day answers the bytes hold (~100 of
     * 20 kB); one asked again after more others than that would have been let go before it came
     */
    private readonly maxAsked = 256,
  ) {}

  /**
   * The answer for `key` read at `generation`, or one freshly made (and kept when it fits); with
   * `once`, a key not asked before is answered by `once()` and only remembered as asked.
   */
  answer(key: string, generation: number, make: () => string | Buffer): Buffer;
  answer(key: string, generation: number, make: () => string | Buffer, once: () => string | Buffer): Buffer | string;
  answer(key: string, generation: number, make: () => string | Buffer, once?: () => string | Buffer): Buffer | string {
    if (once && !this.entries.has(key) && !this.asked.delete(key)) {
      this.misses++;
      this.asked.add(key);
      for (const k of this.asked) {
        if (this.asked.size <= this.maxAsked) break;
        this.asked.delete(k);
      }
      return once();
    }
    const kept = this.entries.get(key);
    if (kept && kept.generation === generation) {
      // most recently used goes last
      this.entries.delete(key);
      this.entries.set(key, kept);
      this.hits++;
      return kept.body;
    }
    this.misses++;
    if (kept) this.drop(key, kept.body);
    const made = make();
    const body = typeof made === 'string' ? Buffer.from(made) : made;
    if (body.length <= this.maxBytes / 10) {
      this.entries.set(key, { generation, body });
      this.bytes += body.length;
      for (const [k, e] of this.entries) {
        if (this.bytes <= this.maxBytes) break;
        this.drop(k, e.body);
      }
    }
    return body;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private drop(key: string, body: Buffer): void {
    this.entries.delete(key);
    this.bytes -= body.length;
  }
}
