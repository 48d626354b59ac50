/**
 * Battery control's tables (docs/design.md "Control: operation mode and plans"): the operation
 * mode of each storage system, its one plan with per-slot status, and the audit of every register
 * write (time, writer, register, value, read-back).
 */
import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';

export type OperationMode = 'self-consumption' | 'plan' | 'backup' | 'optimise';
export type SlotMode = 'charge' | 'discharge' | 'hold' | 'self-consumption';
export type SlotStatus = 'pending' | 'active' | 'done' | 'limited' | 'failed' | 'skipped';

export interface StoredSlot {
  startMs: number;
  endMs: number;
  mode: SlotMode;
  powerW: number | null;
  targetSoc: number | null;
  status: SlotStatus;
  /** why a slot was limited, failed or skipped */
  note: string | null;
}

export interface StoredPlan {
  deviceId: string;
  planId: string;
  source: string;
  createdMs: number;
  slots: StoredSlot[];
}

export interface ModeRow {
  mode: OperationMode;
  changedMs: number;
  changedBy: string;
}

export function modeOf(db: Database, deviceId: string): ModeRow | undefined {
  const r = db
    .prepare<[string], { mode: OperationMode; changed_ms: number; changed_by: string }>(
      'SELECT mode, changed_ms, changed_by FROM control_mode WHERE device_id = ?',
    )
    .get(deviceId);
  return r && { mode: r.mode, changedMs: r.changed_ms, changedBy: r.changed_by };
}

export function setMode(db: Database, deviceId: string, mode: OperationMode, by: string, now: number): void {
  db.prepare(
    `INSERT INTO control_mode (device_id, mode, changed_ms, changed_by) VALUES (?, ?, ?, ?)
     ON CONFLICT(device_id) DO UPDATE SET mode = excluded.mode, changed_ms = excluded.changed_ms, changed_by = excluded.changed_by`,
  ).run(deviceId, mode, now, by);
}

export interface ReserveRow {
  /** percent */
  soc: number;
  changedMs: number;
  changedBy: string;
}

/** The reserve set at run time (Home Assistant, the API); undefined: site.yaml's control.reserveSoc applies. */
export function reserveOf(db: Database, deviceId: string): ReserveRow | undefined {
  const r = db
    .prepare<[string], { soc: number; changed_ms: number; changed_by: string }>(
      'SELECT soc, changed_ms, changed_by FROM control_reserve WHERE device_id = ?',
    )
    .get(deviceId);
  return r && { soc: r.soc, changedMs: r.changed_ms, changedBy: r.changed_by };
}

export function setReserve(db: Database, deviceId: string, soc: number, by: string, now: number): void {
  db.prepare(
    `INSERT INTO control_reserve (device_id, soc, changed_ms, changed_by) VALUES (?, ?, ?, ?)
     ON CONFLICT(device_id) DO UPDATE SET soc = excluded.soc, changed_ms = excluded.changed_ms, changed_by = excluded.changed_by`,
  ).run(deviceId, soc, now, by);
}

/** A register range as it was before control first wrote it (docs/control.md "Fail-safe"). */
export interface OriginalRow {
  id: number;
  unitId: number;
  address: number;
  words: number[];
  readMs: number;
}

/** The originals of a device, in the order control first wrote them. */
export function originalsOf(db: Database, deviceId: string): OriginalRow[] {
  return db
    .prepare<[string], { id: number; unit_id: number; address: number; words: string; read_ms: number }>(
      'SELECT id, unit_id, address, words, read_ms FROM control_originals WHERE device_id = ? ORDER BY id',
    )
    .all(deviceId)
    .map((r) => ({ id: r.id, unitId: r.unit_id, address: r.address, words: JSON.parse(r.words), readMs: r.read_ms }));
}

/** Whether any register of the range has an original already (the first write's value is the one kept). */
export function hasOriginal(db: Database, deviceId: string, unitId: number, address: number, count: number): boolean {
  const rows = db
    .prepare<[string, number, number], { address: number; words: string }>(
      'SELECT address, words FROM control_originals WHERE device_id = ? AND unit_id = ? AND address <= ?',
    )
    .all(deviceId, unitId, address + count - 1);
  return rows.some((r) => r.address + (JSON.parse(r.words) as number[]).length > address);
}

export function recordOriginal(
  db: Database,
  deviceId: string,
  unitId: number,
  address: number,
  words: readonly number[],
  now: number,
): void {
  db.prepare('INSERT INTO control_originals (device_id, unit_id, address, words, read_ms) VALUES (?, ?, ?, ?, ?)').run(
    deviceId,
    unitId,
    address,
    JSON.stringify(words),
    now,
  );
}

export function forgetOriginal(db: Database, id: number): void {
  db.prepare('DELETE FROM control_originals WHERE id = ?').run(id);
}

interface SlotRaw {
  start_ms: number;
  end_ms: number;
  mode: SlotMode;
  power_w: number | null;
  target_soc: number | null;
  status: SlotStatus;
  note: string | null;
}

export function planOf(db: Database, deviceId: string): StoredPlan | undefined {
  const p = db
    .prepare<[string], { plan_id: string; source: string; created_ms: number }>(
      'SELECT plan_id, source, created_ms FROM control_plans WHERE device_id = ?',
    )
    .get(deviceId);
  if (!p) return undefined;
  const slots = db
    .prepare<[string], SlotRaw>(
      'SELECT start_ms, end_ms, mode, power_w, target_soc, status, note FROM control_slots WHERE device_id = ? ORDER BY start_ms',
    )
    .all(deviceId)
    .map((r) => ({
      startMs: r.start_ms,
      endMs: r.end_ms,
      mode: r.mode,
      powerW: r.power_w,
      targetSoc: r.target_soc,
      status: r.status,
      note: r.note,
    }));
  return { deviceId, planId: p.plan_id, source: p.source, createdMs: p.created_ms, slots };
}

/** Replaces the device's plan whole, in one transaction. */
export function replacePlan(db: Database, plan: StoredPlan): void {
  writeTx(db, () => {
    db.prepare('DELETE FROM control_plans WHERE device_id = ?').run(plan.deviceId);
    db.prepare('INSERT INTO control_plans (device_id, plan_id, source, created_ms) VALUES (?, ?, ?, ?)').run(
      plan.deviceId,
      plan.planId,
      plan.source,
      plan.createdMs,
    );
    const ins = db.prepare(
      'INSERT INTO control_slots (device_id, start_ms, end_ms, mode, power_w, target_soc, status, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const s of plan.slots)
      ins.run(plan.deviceId, s.startMs, s.endMs, s.mode, s.powerW, s.targetSoc, s.status, s.note);
  });
}

export function deletePlan(db: Database, deviceId: string): boolean {
  return db.prepare('DELETE FROM control_plans WHERE device_id = ?').run(deviceId).changes > 0;
}

export function setSlotStatus(
  db: Database,
  deviceId: string,
  startMs: number,
  status: SlotStatus,
  note: string | null,
): void {
  db.prepare('UPDATE control_slots SET status = ?, note = ? WHERE device_id = ? AND start_ms = ?').run(
    status,
    note,
    deviceId,
    startMs,
  );
}

export interface WriteAudit {
  atMs: number;
  deviceId: string;
  writer: string;
  address: number;
  values: number[];
  readBack: number[] | null;
  dryRun: boolean;
}

export function recordWrites(db: Database, rows: readonly WriteAudit[]): void {
  const ins = db.prepare(
    'INSERT INTO control_writes (at_ms, device_id, writer, address, value, read_back, dry_run) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  writeTx(db, () => {
    for (const r of rows)
      ins.run(
        r.atMs,
        r.deviceId,
        r.writer,
        r.address,
        JSON.stringify(r.values),
        r.readBack && JSON.stringify(r.readBack),
        r.dryRun ? 1 : 0,
      );
  });
}

export function writesOf(db: Database, deviceId: string, limit = 1000): WriteAudit[] {
  return db
    .prepare<
      [string, number],
      { at_ms: number; writer: string; address: number; value: string; read_back: string | null; dry_run: number }
    >(
      'SELECT at_ms, writer, address, value, read_back, dry_run FROM control_writes WHERE device_id = ? ORDER BY id DESC LIMIT ?',
    )
    .all(deviceId, limit)
    .reverse()
    .map((r) => ({
      atMs: r.at_ms,
      deviceId,
      writer: r.writer,
      address: r.address,
      values: JSON.parse(r.value) as number[],
      readBack: r.read_back === null ? null : (JSON.parse(r.read_back) as number[]),
      dryRun: r.dry_run === 1,
    }));
}

/**
 * Time-weighted mean of `power_W` over the closed buckets of a stream in [fromMs, toMs): what a
 * plan slot measured. Undefined when no bucket of the range is stored.
 */
export function measuredMeanPower(
  db: Database,
  streamKey: string,
  fromMs: number,
  toMs: number,
): { meanW: number; coveredMs: number } | undefined {
  const r = db
    .prepare<[string, number, number], { w: number | null; covered: number | null }>(
      `SELECT SUM(b.power_W * b.covered_ms) / SUM(b.covered_ms) AS w, SUM(b.covered_ms) AS covered
       FROM buckets_all b JOIN streams s ON s.id = b.stream
       WHERE s.key = ? AND b.start_s >= ? AND b.start_s < ? AND b.power_W IS NOT NULL`,
    )
    .get(streamKey, Math.floor(fromMs / 1000), Math.ceil(toMs / 1000));
  return r?.w == null || r.covered == null ? undefined : { meanW: r.w, coveredMs: r.covered };
}

/** A cmd/plan requestId the gateway acted on: the plan it stored, or null for a removal. */
export interface PlanRequestRow {
  deviceId: string;
  planId: string | null;
  atMs: number;
}

export function planRequestOf(db: Database, requestId: string): PlanRequestRow | undefined {
  const r = db
    .prepare<[string], { device_id: string; plan_id: string | null; at_ms: number }>(
      'SELECT device_id, plan_id, at_ms FROM control_plan_requests WHERE request_id = ?',
    )
    .get(requestId);
  return r && { deviceId: r.device_id, planId: r.plan_id, atMs: r.at_ms };
}

/** Records a requestId acted on and forgets those older than `keepFromMs`. */
export function recordPlanRequest(db: Database, requestId: string, row: PlanRequestRow, keepFromMs: number): void {
  db.prepare('DELETE FROM control_plan_requests WHERE at_ms < ?').run(keepFromMs);
  db.prepare(
    'INSERT OR REPLACE INTO control_plan_requests (request_id, device_id, plan_id, at_ms) VALUES (?, ?, ?, ?)',
  ).run(requestId, row.deviceId, row.planId, row.atMs);
}
