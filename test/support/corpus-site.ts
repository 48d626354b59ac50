/**
 * The real daemon on one golden-corpus fixture: the fixture's register image on a Modbus TCP
 * server, a site.yaml naming its devices (validated like any installer's file), the gateway
 * polling the image, its API on a free port and its uplink to the given broker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import { Daemon } from '../../src/main.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { formatConfigErrors } from '../../src/yaml/format.js';
import { partnerToken } from './auth.js';
import { fixtureSiteYaml } from './fixture-site.js';
import { type DeviceFixture, type FixtureDevice, serveImage } from './register-image.js';

/** another register image on a server of its own, with the site devices that read it */
export interface MoreImage {
  fixture: DeviceFixture;
  devices: FixtureDevice[];
}

export interface CorpusSite {
  siteId: string;
  daemon: Daemon;
  url: string;
  token: string;
  /** simulated time the daemon started at */
  start: number;
  stop(): Promise<void>;
}

/** a quarter-hour boundary three simulated minutes ahead: the first bucket closes within about 1.5 s real */
const START = Date.parse('2026-06-21T10:00:00Z') - 3 * 60_000;
const SPEED = 120;

export function corpusSiteYaml(
  f: DeviceFixture,
  siteId: string,
  endpoint: { host: string; port: number },
  dataDir: string,
  mqttUrl?: string,
  more: { image: MoreImage; endpoint: { host: string; port: number } }[] = [],
): string {
  const entries = (devices: FixtureDevice[], endpoint: { host: string; port: number }, unitId: number) =>
    devices.map((d) => ({
      id: d.id,
      role: d.role,
      profile: d.profile,
      ...d.options,
      connection: { type: 'tcp', host: endpoint.host, port: endpoint.port, unitId },
    }));
  return fixtureSiteYaml({
    id: siteId,
    name: f.title,
    dataDir,
    // the same broker (aedes speaks MQTT 3.1.1) carries Home Assistant's discovery, so the live
    // view is checked there too
    more: mqttUrl
      ? {
          uplink: { url: mqttUrl, protocolVersion: 4, reconnectMaxSeconds: 1 },
          homeassistant: { url: mqttUrl, protocolVersion: 4, stateIntervalSeconds: 1 },
        }
      : {},
    devices: [
      ...entries(f.devices, endpoint, f.image.unitId),
      ...more.flatMap((m) => entries(m.image.devices, m.endpoint, m.image.fixture.image.unitId)),
    ],
  });
}

export const corpusSiteId = (f: DeviceFixture): string => `corpus-${f.name}`.replace(/[^a-z0-9_-]/g, '-').slice(0, 64);

export async function startCorpusSite(
  f: DeviceFixture,
  mqttUrl?: string,
  moreImages: MoreImage[] = [],
): Promise<CorpusSite> {
  const server = await serveImage(f);
  const others: Awaited<ReturnType<typeof serveImage>>[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-corpus-'));
  const siteId = corpusSiteId(f);
  const cleanup = async () => {
    await Promise.all([server, ...others].map((s) => s.close()));
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (const m of moreImages) others.push(await serveImage(m.fixture));
    const more = moreImages.map((image, i) => ({ image, endpoint: others[i]! }));
    const parsed = parseConfig(corpusSiteYaml(f, siteId, server, dataDir, mqttUrl, more), `${f.name} site.yaml`);
    if (!parsed.ok)
      throw new Error(`${f.name}: site.yaml is invalid:\n${formatConfigErrors(parsed.errors, f.name).join('\n')}`);
    const daemon = await Daemon.start({
      config: parsed.config,
      clock: new ScaledClock(SPEED, START),
      log: silentLogger(),
    });
    const token = await ensureDemoCredentials(daemon)
      .then(partnerToken)
      .catch(async (err: unknown) => {
        await daemon.stop();
        throw err;
      });
    return {
      siteId,
      daemon,
      url: daemon.url,
      token,
      start: START,
      stop: async () => {
        await daemon.stop();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
