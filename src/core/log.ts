import { type Logger, pino } from 'pino';

/** One JSON line per event on stdout (journald keeps it); level from SITEGW_LOG_LEVEL. */
export function createLogger(level = process.env.SITEGW_LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { app: 'sitegw' },
    // tokens and secrets must never reach a log line (auth issue); redact the usual carriers now
    redact: ['req.headers.authorization', 'headers.authorization', '*.password', '*.secret', '*.client_secret'],
  });
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
