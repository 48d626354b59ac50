/**
 * site.yaml loaded with every rule: config's own (schema, cross-values, TLS files) and the ones
 * about device profiles, which config cannot know because profiles sit below it in the folder
 * order (docs/design.md). Every command and the daemon load site.yaml through here.
 */
import { type ConfigResult, type DeviceChecks, loadSiteYaml, parseSiteYaml } from '../config/load.js';
import { mayShareAddress, profileFindings } from './config-check.js';

/** Against the shipped profiles, read when a rule first needs them. */
const withProfiles: DeviceChecks = { mayShareAddress, findings: profileFindings };

/**
 * Validates site.yaml text. `sourceName` names the file in messages that are about the whole file;
 * `baseDir` is where a relative dataDir is taken from (the config file's folder; default: cwd).
 */
export function parseConfig(text: string, sourceName = 'site.yaml', baseDir: string = process.cwd()): ConfigResult {
  return parseSiteYaml(text, sourceName, baseDir, withProfiles);
}

/** Reads and validates a site.yaml file; a relative dataDir is taken from the file's folder. */
export function loadConfig(file: string): Promise<ConfigResult> {
  return loadSiteYaml(file, withProfiles);
}
