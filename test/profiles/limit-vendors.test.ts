/**
 * Each vendor's limit map, run over real Modbus TCP against a register image written from the
 * vendor's register document or an established integration's table (test/fixtures/limit/): the
 * device receives exactly the writes the source prescribes for a limit and for no limit, in
 * order, each read back; the rating is read where the source says; what the device does once the
 * gateway is gone (the fail-safe) is what the source says, or said to be unknown.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { LimitRevert, PowerLimitCommand } from '../../src/core/active-power-limit.js';
import { createProfileLimit, limitModesOf } from '../../src/profiles/limit.js';
import type { LimitMode } from '../../src/profiles/limit-compile.js';
import { loadProfiles } from '../../src/profiles/registry.js';
import { type ClientBus, connectClientBus } from '../support/client-bus.js';
import { type ControlDevice, type ControlRegister, startControlDevice } from '../support/control-device.js';

interface LimitFixture {
  title: string;
  sources: { title: string; url: string; commit?: string }[];
  profile: string;
  unitId: number;
  ratedW?: number;
  registers: ControlRegister[];
  inputs?: ControlRegister[];
  limits: Partial<
    Record<
      LimitMode,
      {
        revert: LimitRevert;
        revertKnown: boolean;
        steps: { command: PowerLimitCommand; why: string; writes: { address: number; words: number[] }[] }[];
      }
    >
  >;
}

const DIR = fileURLToPath(new URL('../fixtures/limit/', import.meta.url));
const load = (name: string) => parse(readFileSync(join(DIR, `${name}.yaml`), 'utf8')) as LimitFixture;
const names = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => basename(f, '.yaml'))
  .sort();
const profiles = loadProfiles();

const open: { device: ControlDevice; bus: ClientBus }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bus.close();
    await o.device.close();
  }
});

async function rig(f: LimitFixture, mode: LimitMode) {
  const device = await startControlDevice({ unitId: f.unitId, registers: f.registers, inputs: f.inputs ?? [] });
  const bus = await connectClientBus(device.host, device.port);
  open.push({ device, bus });
  const profile = profiles.get(f.profile);
  if (!profile) throw new Error(`no profile ${f.profile}`);
  const limit = createProfileLimit(profile, f.unitId, mode);
  if (!limit) throw new Error(`${f.profile} has no ${mode} limit`);
  return { device, bus, limit };
}

describe('the vendor families the issue names', () => {
  it('each shipped limit map has its fixture device, and each cites a pinned source', () => {
    const withLimit = profiles.all().filter((p) => p.limit);
    expect(withLimit.map((p) => p.name).sort()).toEqual(names.map((n) => load(n).profile).sort());
    for (const p of withLimit) {
      expect(p.limit!.source.url).toMatch(/^https:\/\/github\.com\/.+\/blob\/[0-9a-f]{40}\//);
      expect(limitModesOf(p).sort()).toEqual(Object.keys(load(p.name).limits).sort());
    }
  });

  it('the ones without a limit map are the ones docs/limits-vendors.md names: no source gives a register to write', () => {
    const without = ['solax-hybrid-g4', 'foxess-h3', 'kostal-plenticore-modbus'];
    for (const name of without) expect(profiles.get(name)?.limit, name).toBeUndefined();
    const doc = readFileSync(fileURLToPath(new URL('../../docs/limits-vendors.md', import.meta.url)), 'utf8');
    for (const name of [...without, ...names]) expect(doc, name).toContain(`\`${name}\``);
  });
});

describe.each(names)('%s', (name) => {
  const f = load(name);
  it.each(Object.keys(f.limits) as LimitMode[])(
    '%s: exactly the writes the source prescribes, in order, each read back',
    async (mode) => {
      const { device, bus, limit } = await rig(f, mode);
      if (f.ratedW !== undefined) expect(await limit.ratedW(bus)).toBe(f.ratedW);
      for (const step of f.limits[mode]!.steps) {
        const before = device.writes.length;
        const records = await limit.apply(bus, step.command);
        const received = device.writes.slice(before).map((w) => ({ address: w.address, words: w.words }));
        expect(received, `${JSON.stringify(step.command)}: ${step.why}`).toEqual(step.writes);
        expect(device.writes.slice(before).every((w) => w.unitId === f.unitId)).toBe(true);
        expect(records).toEqual(step.writes.map((w) => ({ address: w.address, values: w.words, readBack: w.words })));
      }
      // no limit again writes nothing: the device holds it already
      const last = device.writes.length;
      expect(await limit.apply(bus, { kind: 'none' })).toEqual([]);
      expect(device.writes.length).toBe(last);
    },
  );

  it.each(Object.keys(f.limits) as LimitMode[])(
    '%s: once the gateway is gone the device does what the source says, or it is said to be unknown',
    async (mode) => {
      const { device, bus, limit } = await rig(f, mode);
      const want = f.limits[mode]!;
      expect(limit.revert).toEqual(want.revert);
      expect(limit.revertKnown).toBe(want.revertKnown);
      // no source gives any of these devices a fallback register: there is no fail-safe to write,
      // and the gateway's loop must hold the site itself (docs/limits-vendors.md)
      expect(limit.setFailSafe).toBeUndefined();
      expect(limit.says).toMatch(/\S/);
      await limit.apply(bus, { kind: 'limit', watts: 0 });
      expect(device.writes.length).toBeGreaterThan(0);
    },
  );

  it.each(Object.keys(f.limits) as LimitMode[])('%s: refuses a limit that is no number of watts', async (mode) => {
    const { device, bus, limit } = await rig(f, mode);
    for (const watts of [-1, Number.NaN])
      await expect(limit.apply(bus, { kind: 'limit', watts })).rejects.toMatchObject({ code: 'LIMIT_WATTS_INVALID' });
    expect(device.writes).toEqual([]);
  });
});
