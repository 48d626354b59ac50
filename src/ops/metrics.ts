/**
 * Prometheus metrics (text exposition format via prom-client, the maintained client for Node).
 * One registry per daemon, so tests can run several daemons in one process. Values that live
 * elsewhere (device health, bucketer counts, disk) are read when scraped; poll durations come
 * from the poller's `devicePolled` events.
 *
 * Features started later (WebSocket, uplink, Home Assistant) register their own series in
 * `registry` while they run: without them the series are absent rather than a made-up zero.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { DEVICE_STATUSES, GRID_STATES, percentToFraction, unknownStatusCode } from '../core/channels.js';
import type { Clock } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { StreamDef } from '../core/streams.js';
import type { ModbusErrorKind } from '../modbus/errors.js';
import type { Site } from '../site/site.js';
import type { BucketerStats } from '../telemetry/bucketer.js';
import { LIVE_QUANTITIES, type LiveKind, type StreamNow } from '../telemetry/now.js';
import { databaseBytes, processWriteBytes } from './disk-io.js';
import type { Health } from './health.js';

export interface MetricsSources {
  site: Site;
  bus: EventBus;
  clock: Clock;
  health: Health;
  bucketer: { stats(): BucketerStats };
  /** the database file (its -wal beside it is counted too) */
  dbFile: string;
  /** every stream's live values (OpsFeature.streamsNow), read at each scrape */
  streamsNow?: () => { def: StreamDef; now: StreamNow }[];
  /** real time, ms */
  now?: () => number;
}

/** Wh → J: Prometheus names energy in its base unit, the joule (docs/prometheus-grafana.md). */
const JOULES_PER_WH = 3600;

/** The live quantities (telemetry/now.ts) each live metric exports. */
const POWER = LIVE_QUANTITIES.filter((q) => q.kind === 'power');
const ENERGY = LIVE_QUANTITIES.filter((q) => q.kind === 'energy');
const SOC = LIVE_QUANTITIES.find((q) => q.kind === 'soc')!;
const SOH = LIVE_QUANTITIES.find((q) => q.kind === 'soh')!;
const GRID = LIVE_QUANTITIES.find((q) => q.kind === 'grid')!;
const STATUS = LIVE_QUANTITIES.find((q) => q.kind === 'status')!;

/**
 * The live channels' gauges (docs/design.md "Live channels"), one per quantity in its base unit,
 * labelled with the channel (the phase: voltage_L1_V, or the DC side: voltage_DC_V). Per-phase
 * power joins sitegw_power_watts, whose channel label already tells the channels apart.
 */
const LIVE_GAUGES: readonly { kind: LiveKind; name: string; help: string }[] = [
  {
    kind: 'frequency',
    name: 'sitegw_frequency_hertz',
    help: 'AC frequency a stream measures now (grid meter, inverter), Hz',
  },
  {
    kind: 'voltage',
    name: 'sitegw_voltage_volts',
    help: 'Voltage now, V; channel: voltage_L1_V..voltage_L3_V (phase to neutral) or voltage_DC_V (a PV string, a battery)',
  },
  {
    kind: 'current',
    name: 'sitegw_current_amperes',
    help: 'Current now (magnitude as the device reports it), A; channel: current_L1_A..current_L3_A or current_DC_A',
  },
  {
    kind: 'temperature',
    name: 'sitegw_temperature_celsius',
    help: 'Temperature the device reports now (inverter cabinet, battery), degrees Celsius',
  },
];

const POLL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const DAY_MS = 86_400_000;

/**
 * prom-client's default gauges named `_total`, which Prometheus reserves for counters (`promtool
 * check metrics` refuses them); each is the sum of its per-type gauge beside it
 * (`sum(nodejs_active_handles)`), so nothing is lost by leaving them out.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * Adds the growth of an externally kept total to a counter (counters only go up). A label set is
 * exported from its first scrape, at 0 until something is counted: a rate over it then reads 0
 * rather than no data.
 */
export function follow(
  counter: Counter<string>,
  seen: Map<string, number>,
  key: string,
  labels: Record<string, string>,
  total: number,
): void {
  if (!seen.has(key)) counter.inc(labels, 0);
  const before = seen.get(key) ?? 0;
  if (total > before) counter.inc(labels, total - before);
  seen.set(key, Math.max(before, total));
}

export class Metrics {
  readonly registry = new Registry();
  private readonly unsubscribe: (() => void)[] = [];
  private newestBucketEnd: number | null = null;
  private writeBaseline: { at: number; bytes: number } | null = null;

  constructor(private readonly src: MetricsSources) {}

  private now(): number {
    return (this.src.now ?? Date.now)();
  }

  start(): void {
    const { site, bus, clock, health, bucketer, dbFile } = this.src;
    const r = this.registry;
    collectDefaultMetrics({ register: r });
    for (const name of MISNAMED_DEFAULTS) r.removeSingleMetric(name);

    const poll = new Histogram({
      name: 'sitegw_device_poll_seconds',
      help: 'Duration of one device poll (all its register reads), by outcome',
      labelNames: ['device', 'outcome'],
      buckets: POLL_BUCKETS,
      registers: [r],
    });
    this.unsubscribe.push(
      bus.on('devicePolled', (e) => poll.observe({ device: e.deviceId, outcome: e.ok ? 'ok' : 'error' }, e.ms / 1000)),
    );
    this.unsubscribe.push(
      bus.on('bucketsClosed', (e) => (this.newestBucketEnd = Math.max(this.newestBucketEnd ?? -Infinity, e.end))),
    );

    const errorsSeen = new Map<string, number>();
    new Counter({
      name: 'sitegw_device_errors_total',
      help: 'Failed device requests by kind (timeout, exception, connection, crc, decode, protocol) since start',
      labelNames: ['device', 'kind'],
      registers: [r],
      collect() {
        for (const d of site.devices.values()) {
          for (const [kind, n] of Object.entries(d.errors) as [ModbusErrorKind, number][]) {
            follow(this, errorsSeen, `${d.config.id}\0${kind}`, { device: d.config.id, kind }, n);
          }
        }
      },
    });
    new Gauge({
      name: 'sitegw_device_online',
      help: '1 when the device answered its last poll',
      labelNames: ['device'],
      registers: [r],
      collect() {
        for (const d of site.devices.values()) this.set({ device: d.config.id }, d.online ? 1 : 0);
      },
    });
    new Gauge({
      name: 'sitegw_device_last_seen_timestamp_seconds',
      help: 'When the device last answered (daemon clock, unix seconds)',
      labelNames: ['device'],
      registers: [r],
      collect() {
        for (const d of site.devices.values())
          if (d.lastSeen !== null) this.set({ device: d.config.id }, d.lastSeen / 1000);
      },
    });

    const self = this;
    new Gauge({
      name: 'sitegw_bucket_lag_seconds',
      help: 'Daemon-clock time since the end of the newest written 15-minute bucket (grace + up to 15 min when healthy)',
      registers: [r],
      collect() {
        if (self.newestBucketEnd !== null) this.set((clock.now() - self.newestBucketEnd) / 1000);
      },
    });
    const bucketStats = new Map<string, number>();
    new Counter({
      name: 'sitegw_buckets_written_total',
      help: '15-minute buckets written to the database',
      registers: [r],
      collect() {
        follow(this, bucketStats, 'written', {}, bucketer.stats().bucketsWritten);
      },
    });
    new Counter({
      name: 'sitegw_readings_dropped_total',
      help: 'Readings not taken into a bucket, by reason',
      labelNames: ['reason'],
      registers: [r],
      collect() {
        const s = bucketer.stats();
        follow(this, bucketStats, 'late', { reason: 'late' }, s.lateDropped);
        follow(this, bucketStats, 'order', { reason: 'out_of_order' }, s.outOfOrderDropped);
        follow(this, bucketStats, 'unknown', { reason: 'unknown_stream' }, s.unknownStream);
      },
    });
    new Counter({
      name: 'sitegw_energy_register_steps_total',
      help: 'Steps of device energy registers that were not plain increments, by outcome: held (beyond what the power explains, not added), rebased (confirmed as a reset or replacement), wrap (taken across the register wrap point); docs/api.md "Channels"',
      labelNames: ['outcome'],
      registers: [r],
      collect() {
        const c = bucketer.stats().counters;
        follow(this, bucketStats, 'held', { outcome: 'held' }, c.held);
        follow(this, bucketStats, 'rebased', { outcome: 'rebased' }, c.rebased);
        follow(this, bucketStats, 'wrap', { outcome: 'wrap' }, c.wraps);
      },
    });

    const failuresSeen = new Map<string, number>();
    new Counter({
      name: 'sitegw_event_listener_failures_total',
      help: 'Event bus listeners that threw or rejected, by event and the feature that registered them (see the log)',
      labelNames: ['event', 'feature'],
      registers: [r],
      collect() {
        for (const f of bus.listenerSeries()) {
          follow(this, failuresSeen, `${f.event}\0${f.feature}`, { event: f.event, feature: f.feature }, f.count);
        }
      },
    });

    new Gauge({
      name: 'sitegw_database_size_bytes',
      help: 'Size of the SQLite database and its WAL on disk',
      registers: [r],
      collect() {
        this.set(databaseBytes(dbFile));
      },
    });
    if (processWriteBytes() !== null) {
      this.writeBaseline = { at: this.now(), bytes: processWriteBytes()! };
      const ioSeen = new Map<string, number>();
      new Counter({
        name: 'sitegw_storage_written_bytes_total',
        help: 'Bytes this process caused to be written to storage (Linux /proc/self/io write_bytes): the SD-card wear',
        registers: [r],
        collect() {
          follow(this, ioSeen, 'w', {}, processWriteBytes() ?? 0);
        },
      });
      new Gauge({
        name: 'sitegw_storage_written_bytes_per_day',
        help: 'Storage writes since the daemon was ready, extrapolated to one real day (about 2 MB for a ten-device home site: docs/install.md "SD-card care")',
        registers: [r],
        collect() {
          const rate = self.writesPerDay();
          if (rate !== null) this.set(rate);
        },
      });
    }
    if (this.src.streamsNow) this.liveValues(this.src.streamsNow);
    new Gauge({
      name: 'sitegw_main_loop_healthy',
      help: '1 while the poll scheduler runs and database writes succeed (what feeds the systemd watchdog)',
      registers: [r],
      collect() {
        this.set(health.mainLoopHealthy() ? 1 : 0);
      },
    });
  }

  /**
   * The site's live values, one series per stream (bounded by site.yaml: devices and their PV
   * modules), labelled device, stream, kind and role (core/streams.ts STREAM_ROLES); read at each scrape from the same function as
   * Home Assistant's states. Power, SoC and grid state are left out while a stream has no
   * current reading (never a made-up zero); the energy counters are lifetime figures.
   */
  private liveValues(streamsNow: () => { def: StreamDef; now: StreamNow }[]): void {
    const registers = [this.registry];
    const labelNames = ['device', 'stream', 'kind', 'role'];
    const labels = (def: StreamDef) => ({
      device: def.deviceId,
      stream: def.id,
      kind: def.deviceKind,
      role: def.role ?? '',
    });
    new Gauge({
      name: 'sitegw_power_watts',
      help: 'Power of a stream now (newest reading), W; positive = into the device (battery charging, grid importing); channel: power_W, power_AC_W, power_DC_W, or one phase power_L1_W..power_L3_W',
      labelNames: [...labelNames, 'channel'],
      registers,
      collect() {
        this.reset();
        for (const { def, now } of streamsNow()) {
          for (const q of POWER) {
            const v = now.values[q.key];
            if (typeof v === 'number') this.set({ ...labels(def), channel: q.channel }, v);
          }
        }
      },
    });
    new Counter({
      name: 'sitegw_energy_joules_total',
      help: "Lifetime energy of a stream by direction (in = into the device: battery charged, grid imported; out = battery discharged, PV produced, grid exported), J; the API's energy_Wh counters times 3600",
      labelNames: [...labelNames, 'direction'],
      registers,
      collect() {
        // the lifetime counts never decrease; reset + inc sets them exactly (prom-client counters have no set)
        this.reset();
        for (const { def, now } of streamsNow()) {
          for (const q of ENERGY) {
            const wh = now.values[q.key];
            if (typeof wh === 'number') this.inc({ ...labels(def), direction: q.direction! }, wh * JOULES_PER_WH);
          }
        }
      },
    });
    // a percentage of a battery stream as a 0..1 ratio, left out while the stream has no current value
    const ratio = (name: string, help: string, key: string) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { def, now } of streamsNow()) {
            const v = now.values[key];
            if (typeof v === 'number') this.set(labels(def), percentToFraction(v));
          }
        },
      });
    ratio('sitegw_battery_soc_ratio', 'Battery state of charge now, 0..1', SOC.key);
    ratio(
      'sitegw_battery_soh_ratio',
      'Battery state of health now (remaining capacity against new), 0..1; where the battery reports it',
      SOH.key,
    );
    for (const g of LIVE_GAUGES) {
      const quantities = LIVE_QUANTITIES.filter((q) => q.kind === g.kind);
      new Gauge({
        name: g.name,
        help: g.help,
        labelNames: [...labelNames, 'channel'],
        registers,
        collect() {
          this.reset();
          for (const { def, now } of streamsNow()) {
            for (const q of quantities) {
              const v = now.values[q.key];
              if (typeof v === 'number') this.set({ ...labels(def), channel: q.channel }, v);
            }
          }
        },
      });
    }
    new Gauge({
      name: 'sitegw_device_status',
      help: `Operating status a device reports now: 1 for the current one (${DEVICE_STATUSES.join(', ')}, or unknown with the code the device sent in the code label), 0 for the others; absent while not read`,
      labelNames: [...labelNames, 'status', 'code'],
      registers,
      collect() {
        this.reset();
        for (const { def, now } of streamsNow()) {
          const v = now.values[STATUS.key];
          if (typeof v !== 'string') continue;
          for (const status of DEVICE_STATUSES) this.set({ ...labels(def), status }, status === v ? 1 : 0);
          const code = unknownStatusCode(v);
          this.set(
            { ...labels(def), status: 'unknown', ...(code !== undefined ? { code: String(code) } : {}) },
            code !== undefined ? 1 : 0,
          );
        }
      },
    });
    new Gauge({
      name: 'sitegw_grid_state',
      help: 'Grid state at the connection point now: 1 for the current state (ok, not_present, unknown), 0 for the others',
      labelNames: [...labelNames, 'state'],
      registers,
      collect() {
        this.reset();
        for (const { def, now } of streamsNow()) {
          if (!(def.channels as string[]).includes(GRID.channel)) continue;
          // no current reading: the state is unknown, as the grid events say when a meter stops answering
          const v = now.values[GRID.key];
          const current = typeof v === 'string' ? v : 'unknown';
          for (const state of GRID_STATES) this.set({ ...labels(def), state }, state === current ? 1 : 0);
        }
      },
    });
  }

  /** From now on storage writes are counted for the per-day figure (call once start-up writes are done). */
  markReady(): void {
    const bytes = processWriteBytes();
    if (bytes !== null) this.writeBaseline = { at: this.now(), bytes };
  }

  /** Bytes written per real day since markReady(); null in its first minute or where /proc/self/io is missing. */
  writesPerDay(): number | null {
    const bytes = processWriteBytes();
    if (bytes === null || !this.writeBaseline) return null;
    const ms = this.now() - this.writeBaseline.at;
    if (ms < 60_000) return null;
    return ((bytes - this.writeBaseline.bytes) / ms) * DAY_MS;
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.registry.clear();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The exposition text. With `visible`, series labelled with a device the caller may not see
   * are left out (a partner's token shows its own devices only).
   */
  async text(visible?: (deviceId: string) => boolean): Promise<string> {
    const all = await this.registry.metrics();
    if (!visible) return all;
    return all
      .split('\n')
      .filter((line) => {
        if (line.startsWith('#')) return true;
        const m = /[{,]device="((?:[^"\\]|\\.)*)"/.exec(line);
        return !m || visible(m[1]!);
      })
      .join('\n');
  }
}
