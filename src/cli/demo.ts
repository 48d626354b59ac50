/** `sitegw demo`: the simulated site and the gateway on it (src/demo/demo.ts), until a signal. */
import { parseArgs } from 'node:util';
import { createLogger } from '../core/log.js';
import { accessHelp, credentialsFile } from '../demo/credentials.js';
import { type Demo, startDemo } from '../demo/demo.js';
import { intOption, positiveOption, valuesOrMistake } from './options.js';
import { EXIT, type Output, stdio } from './output.js';
import { watchSignals } from './until-signal.js';

function banner(demo: Demo, history: string | undefined): string {
  const now = new Date(demo.clock.now());
  const from = `${new Date(now.getTime() - 6 * 3_600_000).toISOString().slice(0, 16)}:00Z`;
  const grid = demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED'))?.id ?? '';
  const { config } = demo.daemon.ctx;
  const { inverter, meter } = demo.servers;
  const uplink =
    demo.daemon.uplink && config.uplink
      ? `  MQTT uplink:           ${demo.daemon.uplink.health().broker} (topics below ${config.uplink.topicPrefix}/)\n`
      : '';
  const { homeassistant } = config;
  const ha = homeassistant
    ? `  Home Assistant:        ${homeassistant.url} (discovery below ${homeassistant.discoveryPrefix}/)\n`
    : '';
  const ws = demo.url.replace(/^http/, 'ws');
  const requests = [
    `${demo.url}/api/v1/sites/${demo.siteId}/topology`,
    `${demo.url}/api/v1/devices/${grid}/telemetry?interval=${from}/PT6H&include=default,energy`,
  ];
  return `
sitegw demo is running: a simulated home (PV, two battery blocks, hybrid inverter, grid and house meters)
  Modbus TCP (SunSpec):  inverter ${inverter.host}:${inverter.port}, meters ${meter.host}:${meter.port}
  Energy Site API:       ${demo.url}
  Status page:           ${demo.url}/ (sign in as the site owner below)
  OpenAPI document:      ${demo.url}/openapi.json
  Clock:                 ${demo.clock.speed}x real time, simulated now ${now.toISOString()}
  WebSocket streams:     ${ws}/ws?streams=telemetry-realtime,grid-events (same bearer token)
${uplink}${ha}  Simulator control:     curl -X POST ${demo.simControl.url}/grid-outage -d '{"on":true}'   \
(opens the grid relay; false closes it)

${accessHelp(demo.credentials, credentialsFile(config.dataDir), requests)}${filling(demo, history)}
Ctrl-C stops it; data stays in the data directory.
`;
}

/** What the banner says of a history pre-fill still running: the API answers what is filled so far. */
function filling(demo: Demo, history: string | undefined): string {
  if (!history || demo.prefilledUntil >= demo.clock.now() - 3_600_000) return '';
  const from = new Date(demo.prefilledUntil).toISOString().slice(0, 16);
  return `History (${history}) is being filled in the background from ${from}Z: the API answers what is filled so far; the log says when it is done.\n`;
}

export async function demoCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      history: { type: 'string' },
      speed: { type: 'string' },
      mqtt: { type: 'string' },
      homeassistant: { type: 'string' },
      'inverter-port': { type: 'string' },
      'meter-port': { type: 'string' },
      'sim-control-port': { type: 'string' },
      'site-id': { type: 'string' },
    },
  });
  // 0 (the default) picks a free port: two demos side by side do not collide; a number pins it
  // for a partner's config or a firewall rule
  const port = (name: string, v: string | undefined) => intOption(name, v, 0, { min: 0, max: 65535 });
  const checked = valuesOrMistake(io, 'demo', () => ({
    port: intOption('port', values.port, 8080, { min: 0, max: 65535 }),
    speed: positiveOption('speed', values.speed, 1),
    modbusPorts: {
      inverter: port('inverter-port', values['inverter-port']),
      meter: port('meter-port', values['meter-port']),
    },
    simControlPort: port('sim-control-port', values['sim-control-port']),
  }));
  if (!checked) return EXIT.FAILURE;
  const signals = watchSignals(io);
  const log = createLogger();
  const dataDir = values['data-dir'] ?? './data';
  // the start (database, simulator, API) takes a second or more on a Pi: say so at once
  log.info({ dataDir, history: values.history ?? null }, 'sitegw demo starting');
  const demo = await startDemo({
    ...checked,
    host: values.host ?? '127.0.0.1',
    dataDir,
    history: values.history,
    log,
    mqtt: values.mqtt,
    homeassistant: values.homeassistant,
    siteId: values['site-id'],
    stopping: signals.stopping,
    // the banner and the API come first; the history fills behind them (docs/install.md "The demo")
    fillInBackground: true,
  });
  // a Ctrl-C during the start: no banner for a demo that is about to stop
  if (!signals.stopping.aborted) io.out(banner(demo, values.history));
  demo.beginFill();
  return signals.until(() => demo.stop(), demo.daemon.ctx.log);
}
