/** `sitegw consume`: the reference consumer (src/consumer/) until SIGTERM/SIGINT (docs/mqtt-contract.md). */
import { parseArgs } from 'node:util';
import { Consumer } from '../consumer/consumer.js';
import { printableUrl } from '../consumer/postgres-db.js';
import { isPostgresUrl } from '../consumer/store.js';
import { EXIT, type Output, printError, stdio, UsageError } from './output.js';
import { watchSignals } from './until-signal.js';

const STATS_EVERY_MS = 10_000;

function seconds(name: string, v: string): number {
  const n = Number(v);
  if (!(n >= 0 && n <= 86_400)) throw new UsageError(`--${name} must be seconds between 0 and 86400, got '${v}'`);
  return n * 1000;
}

export async function consumeCommand(argv: string[], io: Output = stdio): Promise<number> {
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
    printError(io, 'consume', '--broker URL is required, e.g. --broker mqtt://127.0.0.1:1883');
    return EXIT.USAGE;
  }
  if (!/^[^/+#$]+$/.test(values.group)) {
    printError(io, 'consume', `--group must be one topic level without / + # $, got '${values.group}'`);
    return EXIT.USAGE;
  }
  if (values.db !== undefined && values.postgres !== undefined) {
    printError(io, 'consume', 'give --db FILE or --postgres URL, not both');
    return EXIT.USAGE;
  }
  if (values.postgres !== undefined && !isPostgresUrl(values.postgres)) {
    printError(io, 'consume', `--postgres takes a URL postgres://user@host:port/database, got '${values.postgres}'`);
    return EXIT.USAGE;
  }
  const db = values.postgres ?? values.db ?? 'sitegw-consumer.db';
  const gaps = {
    waitMs: seconds('gap-wait', values['gap-wait']),
    retryMs: seconds('retry-after', values['retry-after']),
  };
  const signals = watchSignals(io);
  const consumer = new Consumer({
    broker: values.broker,
    group: values.group,
    filter: values.filter,
    db,
    gaps,
    ...(values['client-id'] ? { clientId: values['client-id'] } : {}),
    ...(values.username ? { username: values.username, password: process.env.SITEGW_CONSUMER_PASSWORD ?? '' } : {}),
    log: (line) => io.err(`${line}\n`),
  });
  await consumer.start();
  io.out(
    `consuming ${(consumer.filters[0] ?? '').replace(/\/telemetry$/, '/…')} into ${isPostgresUrl(db) ? printableUrl(db) : db}\n`,
  );
  const stats = () => io.out(`${JSON.stringify(consumer.stats)}\n`);
  const timer = setInterval(stats, STATS_EVERY_MS);
  return signals.until(async () => {
    clearInterval(timer);
    await consumer.stop();
    stats();
  });
}
