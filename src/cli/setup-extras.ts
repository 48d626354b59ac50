/**
 * `sitegw setup`'s questions after the devices, the ones the setup page asks too: a flat tariff,
 * the MQTT uplink, Home Assistant, battery control, an export limit, and a partner client with
 * its devices. Each answer goes into site.yaml through src/setup/edit.ts, the page's own core:
 * checked as check-config checks, written with the file's comments. A refused answer is printed
 * as check-config prints it (file:line path: message — hint) and asked again.
 */
import { addClient, ClientError } from '../auth/clients.js';
import { type ConfigChange, editSiteYaml } from '../setup/edit.js';
import { formatConfigErrors } from '../yaml/format.js';
import { withDb } from './data-dir.js';
import { type Output, UsageError } from './output.js';
import type { Asker, Check } from './prompt.js';

export interface ExtraFlags {
  'import-price'?: string;
  'export-price'?: string;
  'uplink-url'?: string;
  'homeassistant-url'?: string;
  control?: string;
  'export-limit'?: string;
  client?: string;
}

const price: Check = (v) => (v === '' || Number.isFinite(Number(v)) ? undefined : 'a number, e.g. 0.30, or empty');
const watts: Check = (v) => (v === '' || /^\d+$/.test(v) ? undefined : 'whole watts, e.g. 5000, or empty');
const yesNo: Check = (v) => (['yes', 'no', 'y', 'n'].includes(v) ? undefined : 'yes or no');

/**
 * Asks `question` until the changes made of its answer pass; an empty answer (or one `toChanges`
 * makes nothing of) changes nothing.
 */
async function askApplied(
  ask: Asker,
  io: Output,
  file: string,
  question: string,
  fallback: string,
  toChanges: (answer: string) => Promise<ConfigChange[]> | ConfigChange[],
  check?: Check,
): Promise<string> {
  for (;;) {
    const answer = await ask.ask(question, fallback, check);
    const changes = await toChanges(answer);
    if (changes.length === 0) return answer;
    // setup has just written the file: a backup per answer would only repeat it
    const r = await editSiteYaml(file, changes, { backup: false });
    if (r.ok || r.code === 'CONFIG_UNCHANGED') return answer;
    io.err(`  ${r.code}: ${r.message}\n`);
    for (const line of formatConfigErrors(r.errors, file)) io.err(`  ${line}\n`);
    // a refused flag would be refused again: asked on a terminal, the --yes run ends with it
    if (answer === fallback && fallback !== '') throw new UsageError(`${question}: '${answer}' is refused (above)`);
  }
}

/** The extra questions; returns the partner client's id and secret when one was made. */
export async function extraAnswers(
  ask: Asker,
  v: ExtraFlags,
  file: string,
  dataDir: string,
  deviceIds: string[],
  io: Output,
): Promise<{ client?: { id: string; secret: string } }> {
  io.out('\nTariff, uplink, Home Assistant, control and limits (each can be changed later on the setup page):\n');
  await askApplied(
    ask,
    io,
    file,
    'flat tariff: import price per kWh (empty: no tariff)',
    v['import-price'] ?? '',
    async (importPrice) => {
      if (importPrice === '') return [];
      const exportPrice = await ask.ask('  export price per kWh', v['export-price'] ?? '0', price);
      return [
        {
          path: ['tariff'],
          value: { type: 'flat', importPrice: Number(importPrice), exportPrice: Number(exportPrice) },
        },
      ];
    },
    price,
  );
  for (const [section, what] of [
    ['uplink', 'MQTT uplink to the cloud: broker URL'],
    ['homeassistant', "Home Assistant's MQTT broker URL"],
  ] as const) {
    const flag = section === 'uplink' ? v['uplink-url'] : v['homeassistant-url'];
    await askApplied(ask, io, file, `${what} (empty: none)`, flag ?? '', async (url) => {
      if (url === '') return [];
      const username = await ask.ask('  user name at the broker (empty: none)', '');
      const password = username === '' ? '' : await ask.secret('  its password (empty: none)');
      return [
        {
          path: [section],
          value: { url, ...(username ? { username } : {}), ...(password ? { password } : {}) },
        },
      ];
    });
  }
  await askApplied(
    ask,
    io,
    file,
    'allow battery control (writes to the storage system)? yes or no',
    v.control ?? 'no',
    (a) => (a.startsWith('y') ? [{ path: ['control', 'enabled'], value: true }] : []),
    yesNo,
  );
  await askApplied(
    ask,
    io,
    file,
    'most export at the grid meter, W (empty: no limit)',
    v['export-limit'] ?? '',
    (w) => (w === '' ? [] : [{ path: ['limits', 'exportW'], value: Number(w) }]),
    watts,
  );
  return { client: await partnerClient(ask, v, dataDir, deviceIds, io) };
}

/** A client for the first partner app, so its first API call has a credential. */
async function partnerClient(
  ask: Asker,
  v: ExtraFlags,
  dataDir: string,
  deviceIds: string[],
  io: Output,
): Promise<{ id: string; secret: string } | undefined> {
  for (;;) {
    const id = await ask.ask('partner client for the API: client id (empty: none)', v.client ?? '');
    if (id === '') return undefined;
    const devices = await ask.ask('  the devices it sees (comma-separated)', deviceIds.join(','));
    try {
      const { secret } = await withDb(dataDir, (db) =>
        addClient(
          db,
          {
            id,
            devices: devices
              .split(',')
              .map((d) => d.trim())
              .filter(Boolean),
          },
          Date.now(),
          new Set(deviceIds),
        ),
      );
      io.out(`client ${id}: secret ${secret}\nStore it now: it is shown only this once.\n`);
      return { id, secret: secret! };
    } catch (e) {
      if (!(e instanceof ClientError)) throw e;
      io.err(`  ${e.message}\n`);
      if (v.client) throw new UsageError(`--client ${v.client}: ${e.message}`);
    }
  }
}
