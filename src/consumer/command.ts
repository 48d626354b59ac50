import { parseArgs } from 'node:util';
import { Consumer } from './consumer.js';
import { isPostgresUrl } from './store.js';

type UntilSignal = (stop: () => Promise<void>) => Promise<number>;

const STATS_EVERY_MS = 10_000;

/** A database URL as it may be printed: its password left out. */
function withoutPassword(target: string): string {
  if (!isPostgresUrl(target)) return target;
  try {
    const u = new URL(target);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the PostgreSQL database';
  }
}

/** `sitegw consume`: the reference consumer until SIGTERM/SIGINT (docs/mqtt-contract.md). */
export async function consumeCommand(argv: string[], untilSignal: UntilSignal): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      broker: { type: 'string' },
      group: { type: 'string', default: 'sitegw-consumers' },
      filter: { type: 'string', default: 'sitegw/+' },
      db: { type: 'string' },
      postgres: { type: 'string' },
      'client-id': { type: 'string' },
      username: { type: 'string' },
      'gap-wait': { type: 'string', default: '30' },
      'retry-after': { type: 'string', default: '120' },
    },
  });
  if (!values.broker) {
    process.stderr.write('sitegw consume: --broker URL is required, e.g. --broker mqtt://127.0.0.1:1883\n');
    return 2;
  }
  const seconds = (name: string, v: string) => {
    const n = Number(v);
    if (!(n >= 0 && n <= 86_400)) throw Object.assign(new Error(`--${name} must be seconds between 0 and 86400, got '${v}'`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
    return n * 1000;
  };
  if (!/^[^/+#$]+$/.test(values.group)) {
    process.stderr.write(`sitegw consume: --group must be one topic level without / + # $, got '${values.group}'\n`);
    return 2;
  }
  if (values.db !== undefined && values.postgres !== undefined) {
    process.stderr.write('sitegw consume: give --db FILE or --postgres URL, not both\n');
    return 2;
  }
  if (values.postgres !== undefined && !isPostgresUrl(values.postgres)) {
    process.stderr.write(`sitegw consume: --postgres takes a URL postgres://user@host:port/database, got '${values.postgres}'\n`);
    return 2;
  }
  const db = values.postgres ?? values.db ?? 'sitegw-consumer.db';
  const consumer = new Consumer({
    broker: values.broker,
    group: values.group,
    filter: values.filter,
    db,
    gaps: { waitMs: seconds('gap-wait', values['gap-wait']), retryMs: seconds('retry-after', values['retry-after']) },
    ...(values['client-id'] ? { clientId: values['client-id'] } : {}),
    ...(values.username ? { username: values.username, password: process.env.SITEGW_CONSUMER_PASSWORD ?? '' } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await consumer.start();
  process.stdout.write(`consuming ${consumer.filters[0]!.replace(/\/telemetry$/, '/…')} into ${withoutPassword(db)}\n`);
  const timer = setInterval(() => process.stdout.write(`${JSON.stringify(consumer.stats)}\n`), STATS_EVERY_MS);
  return untilSignal(async () => {
    clearInterval(timer);
    await consumer.stop();
    process.stdout.write(`${JSON.stringify(consumer.stats)}\n`);
  });
}
