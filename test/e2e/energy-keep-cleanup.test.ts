/**
 * A daemon's life in a temporary data folder leaves no kept-counts file in /dev/shm (the suite
 * once left one per daemon for good: 3,443 of them), while the file still outlives the daemon
 * until the run's folder goes (the keep's promise: it survives the process). And what the keep
 * tells a start: a database lived in a folder that has none now, so health says it started fresh.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { energyKeepFile } from '../../src/store/energy-keep.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { openEnergyKeepDir } from '../support/energy-keep-dir.js';

const SHM = '/dev/shm';
const keptIn = (dir: string) => readdirSync(dir).filter((f) => /^sitegw-[0-9a-f]{16}-energy\.json$/.test(f));

describe('the energy keep of a test daemon', () => {
  const outer = process.env.SITEGW_ENERGY_KEEP_DIR;
  let close = () => {};
  afterEach(() => {
    close();
    if (outer === undefined) delete process.env.SITEGW_ENERGY_KEEP_DIR;
    else process.env.SITEGW_ENERGY_KEEP_DIR = outer;
  });

  it("the suite's global setup gave this run a folder of its own", () => {
    expect(outer, 'SITEGW_ENERGY_KEEP_DIR from test/support/energy-keep-dir.ts').toBeTruthy();
    expect(existsSync(outer!)).toBe(true);
  });

  it('a daemon started, stopped and its data folder removed leaves nothing in /dev/shm once the run ends', async () => {
    delete process.env.SITEGW_ENERGY_KEEP_DIR;
    close = openEnergyKeepDir();
    const runDir = process.env.SITEGW_ENERGY_KEEP_DIR!;
    const site = await demoSite({ speed: 10 });
    const file = basename(energyKeepFile(site.dataDir));
    const inShmBefore = keptIn(SHM).filter((f) => f === file).length;
    let atStop: string[];
    try {
      // a keep while it runs (every 10 s of readings: a real second at speed 10)
      await waitFor('a keep in the run folder', () => keptIn(runDir).includes(file), 30_000);
    } finally {
      await site.cleanup();
      // the keep outlives the daemon (a kill or a crash must not lose it) ...
      atStop = keptIn(runDir);
    }
    expect(atStop).toEqual([file]);
    // ... in the run's folder, not in /dev/shm, and the run's end removes it
    expect(keptIn(SHM).filter((f) => f === file).length).toBe(inShmBefore);
    close();
    expect(existsSync(runDir)).toBe(false);
    expect(keptIn(SHM).filter((f) => f === file)).toEqual([]);
  });
});

describe('a data folder emptied between two lives', () => {
  it("the start after says it began with an empty folder, until the next start; a new folder's first start does not", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-emptied-'));
    const problems = async (url: string) => ((await getJson(`${url}/healthz`)).body as { problems: string[] }).problems;
    const EMPTY = /^started with an empty data folder/;
    try {
      const first = await demoSite({ dataDir: dir });
      expect(await problems(first.url)).not.toContainEqual(expect.stringMatching(EMPTY));
      await first.cleanup();
      for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
      const second = await demoSite({ dataDir: dir });
      try {
        expect(await problems(second.url)).toContainEqual(expect.stringMatching(EMPTY));
      } finally {
        await second.cleanup();
      }
      const third = await demoSite({ dataDir: dir });
      try {
        expect(await problems(third.url)).not.toContainEqual(expect.stringMatching(EMPTY));
      } finally {
        await third.cleanup();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
