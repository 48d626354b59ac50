/**
 * Validation of IEEE 2030.5 / CSIP-AUS bodies against the schemas in ./schema (sitegw's statement
 * of the resources it uses; see the header of schema/sep-subset.xsd for why IEEE's own file is not
 * shipped) with xmllint from libxml2 (Debian libxml2-utils), the W3C XML Schema validator of the
 * platform: no native npm module to build on a Pi and no validator written here. One short process
 * per body; bodies arrive at most every few seconds.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GridOpError } from './errors.js';

export const SCHEMA_FILE = fileURLToPath(new URL('./schema/sep-subset.xsd', import.meta.url));

export type Validation = { ok: true } | { ok: false; errors: string[] };

/** Validates `body` against `schema` (default: sitegw's IEEE 2030.5 + CSIP-AUS schema). */
export function validateXml(body: string, schema = SCHEMA_FILE): Promise<Validation> {
  return new Promise((resolve, reject) => {
    const child = spawn('xmllint', ['--noout', '--nonet', '--schema', schema, '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 64_000) stderr += d;
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        e.code === 'ENOENT'
          ? new GridOpError('GRIDOP_NO_XMLLINT', 'xmllint is not installed (apt install libxml2-utils)')
          : e,
      );
    });
    child.stdin.on('error', () => {
      // xmllint may stop reading a broken body early; its exit status tells the result
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ ok: true });
      const errors = stderr
        .split('\n')
        .filter((l) => /error|failed|fails/i.test(l) && !/^- fails to validate$/.test(l.trim()))
        .map((l) => l.replace(/^-:/, 'line '))
        .slice(0, 10);
      resolve({
        ok: false,
        errors: errors.length > 0 ? errors : [`xmllint exit ${code}: ${stderr.trim().slice(0, 300)}`],
      });
    });
    child.stdin.end(body);
  });
}
