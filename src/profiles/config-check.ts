/**
 * site.yaml rules about device profiles, for src/config/semantic.ts: a `profile:` must name a
 * file in device-profiles/ (or 'sunspec'), that file must be valid, and it must describe the
 * device's role. check-config runs them, so an installer learns of a typo before the daemon
 * refuses to start.
 */
import { join } from 'node:path';
import { DEVICE_ROLES, type DeviceRole } from '../core/device-role.js';
import type { Finding } from '../yaml/messages.js';
import { isRec, type Rec } from '../yaml/parse.js';
import { closest } from '../yaml/suggest.js';
import type { ProfileDir } from './load.js';
import { installedProfiles, rolesOf, SUNSPEC } from './registry.js';

/**
 * Findings for `devices[i].profile` of every device of the raw config (against the shipped profiles
 * by default). A site of SunSpec devices alone names no file, so none is read: reading them
 * compiles the profile schema, over a second of CPU at every start (bench/demo-start.ts).
 */
export function profileFindings(devices: readonly unknown[], shipped?: ProfileDir): Finding[] {
  if (!devices.some((raw) => isRec(raw) && typeof raw.profile === 'string' && raw.profile !== SUNSPEC)) return [];
  const installed = shipped ?? installedProfiles();
  const known = [SUNSPEC, ...[...installed.profiles.keys(), ...installed.broken.keys()].sort()];
  const out: Finding[] = [];
  devices.forEach((raw, index) => {
    if (!isRec(raw) || typeof raw.profile !== 'string' || raw.profile === SUNSPEC) return;
    const name = raw.profile;
    const at = ['devices', index, 'profile'];
    const broken = installed.broken.get(name);
    if (broken) {
      const first = broken[0]!;
      const where = `${join(installed.dir, `${name}.yaml`)}${first.line !== undefined ? `:${first.line}` : ''}`;
      out.push({
        segments: at,
        anchor: at,
        message: `the profile '${name}' has ${broken.length === 1 ? 'a mistake' : `${broken.length} mistakes`}: ${where} ${first.path ? `${first.path}: ` : ''}${first.message}`,
        hint: first.hint ? `fix the profile: ${first.hint}` : 'fix the profile file',
      });
      return;
    }
    const profile = installed.profiles.get(name);
    if (!profile) {
      const suggestion = closest(name, known);
      out.push({
        segments: at,
        anchor: at,
        message: `no device profile named '${name}' (looked in ${installed.dir})`,
        hint: suggestion
          ? `did you mean '${suggestion}'? available: ${known.join(', ')}`
          : `use one of: ${known.join(', ')}`,
      });
      return;
    }
    const role = raw.role;
    const isRole = typeof role === 'string' && (DEVICE_ROLES as readonly string[]).includes(role);
    if (!isRole || profile.roles[role as DeviceRole]) return;
    out.push({
      segments: at,
      anchor: at,
      message: `the profile '${name}' has no ${role} section`,
      hint: `it describes: ${rolesOf(profile).join(', ')}; pick one of those roles or another profile`,
    });
  });
  return out;
}

/**
 * Two devices at one Modbus address are fine when they are roles of one multi-function device:
 * different roles, and either one profile (a hybrid inverter with its battery and meter behind
 * one unit id) or a `sunspec` device and a profile written for the vendor's own registers next
 * to its SunSpec map (`besideSunSpec: true`: a SolarEdge inverter's StorEdge battery block,
 * KOSTAL's own map). Any other pair is two devices configured at one unit id by mistake.
 */
export function mayShareAddress(a: Readonly<Rec>, b: Readonly<Rec>, installed?: ProfileDir): boolean {
  if (
    typeof a.profile !== 'string' ||
    typeof b.profile !== 'string' ||
    typeof a.role !== 'string' ||
    typeof b.role !== 'string' ||
    a.role === b.role
  )
    return false;
  if (a.profile === b.profile) return true;
  const other = a.profile === SUNSPEC ? b.profile : b.profile === SUNSPEC ? a.profile : undefined;
  return other !== undefined && (installed ?? installedProfiles()).profiles.get(other)?.besideSunSpec === true;
}
