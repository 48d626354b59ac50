/**
 * `sitegw run` on the package's placeholder site.yaml: the first-run page (src/api/http/
 * onboarding.ts) until the owner sends a site, then the gateway on it, in the same process.
 * Under systemd the service is ready (READY=1) and pings its watchdog while it waits, so a fresh
 * install serves the page at once and `systemctl status` says what to do.
 */
import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { buildOnboarding } from '../api/http/onboarding.js';
import { resolveTls } from '../api/http/tls.js';
import type { SiteConfig } from '../config/types.js';
import { SdNotify, watchdogMs } from '../ops/sd-notify.js';
import { firstRunPlace, newSetupCode, saveSetupCode } from '../setup/first-run.js';
import { EXIT } from './output.js';
import type { SignalWatch } from './until-signal.js';

/** The new site's config, or the exit code (a stop signal while waiting: 0). */
export async function firstRun(
  file: string,
  text: string,
  log: Logger,
  signals: SignalWatch,
): Promise<SiteConfig | number> {
  const said = firstRunPlace(text);
  // a relative dataDir is taken from site.yaml's folder, as the loader takes it
  const place = { ...said, dataDir: resolve(dirname(file), said.dataDir) };
  const code = newSetupCode();
  let codeFile: string;
  try {
    codeFile = saveSetupCode(place.dataDir, code);
  } catch (e) {
    log.error({ dataDir: place.dataDir, err: (e as Error).message }, 'first run: cannot write the setup code');
    return EXIT.FAILURE;
  }
  // the self-signed certificate the gateway itself serves later, made now: the code and the
  // owner's password must not cross the LAN in clear text either
  const tls = resolveTls(
    {
      site: { id: 'sitegw' },
      dataDir: place.dataDir,
      http: { host: place.httpHost, port: place.httpPort, tls: { mode: 'auto' }, insecure: false },
    } as SiteConfig,
    log,
  );
  let done: (c: SiteConfig) => void = () => undefined;
  const chosen = new Promise<SiteConfig>((resolve) => (done = resolve));
  const app = await buildOnboarding({ file, code, codeFile, place, ...(tls.https ? { https: tls.https } : {}), done });
  const url = await app.listen({ host: place.httpHost, port: place.httpPort });
  log.info(
    { url, setupCode: code, codeFile, config: file },
    `sitegw is not set up yet: open ${url}/ and give the setup code ${code} (also in ${codeFile})`,
  );
  const notify = new SdNotify({ log });
  notify.notify({ READY: '1', STATUS: `not set up: the first-run page is at ${url}/` });
  const period = watchdogMs();
  const ping = period === null ? null : setInterval(() => notify.notify({ WATCHDOG: '1' }), period / 3);
  const stopped = new Promise<null>((resolve) => {
    if (signals.stopping.aborted) resolve(null);
    signals.stopping.addEventListener('abort', () => resolve(null), { once: true });
  });
  const config = await Promise.race([chosen, stopped]);
  if (ping) clearInterval(ping);
  await app.close();
  // gone with the page: a new start makes a new one, and once set up the owner signs in with the password
  rmSync(codeFile, { force: true });
  if (config) notify.notify({ RELOADING: '1', STATUS: 'site.yaml written on the first-run page: starting' });
  await notify.stop();
  return config ?? EXIT.OK;
}
