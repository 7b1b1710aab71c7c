import pino, { type Logger, type LoggerOptions } from 'pino';

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-hubspot-signature-v3"]',
  'headers.authorization',
  '*.password',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.clientSecret',
  '*.client_secret',
  '*.secret',
  '*.apiKey',
  '*.credentials',
  '*.body',
];

export function createLogger(options: { level: string; name?: string } & LoggerOptions): Logger {
  return pino({ ...options, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}

export type { Logger };
