/**
 * vitest's global setup: the daemons of a test run keep their energy counts (store/energy-keep.ts)
 * in a folder of the run, under /dev/shm like a site's, removed when the run ends. A clean stop
 * leaves the file on purpose (a damaged database's next start still has the counts) and it is
 * named by the data folder, which a test removes: without this every daemon a test started left
 * one file in /dev/shm for good (3,443 on the CI machine, 2026-12-02).
 */
import { energyKeepDir } from '../../src/store/energy-keep.js';
import { openRunFolder } from './run-folder.js';

/** Points SITEGW_ENERGY_KEEP_DIR at a new folder unless one is set; the returned teardown removes the folder it made. */
export function openEnergyKeepDir(): () => void {
  // unset, energyKeepDir() is where a site keeps its counts
  return openRunFolder({ variable: 'SITEGW_ENERGY_KEEP_DIR', under: energyKeepDir(), prefix: 'sitegw-test-keep-' });
}

export default function setup(): () => void {
  return openEnergyKeepDir();
}
