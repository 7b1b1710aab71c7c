import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

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
  '*.codeVerifier',
  '*.code_verifier',
  '*.clientSecret',
  '*.client_secret',
  '*.secret',
  '*.apiKey',
  '*.credentials',
  '*.body',
];

/** A query parameter whose name contains one of these words (any case) holds a secret. */
const SECRET_PARAM_WORDS = 'key|token|secret|password|code|state';
const SECRET_PARAM_NAME = new RegExp(SECRET_PARAM_WORDS, 'i');
// Such a parameter in a URL anywhere in a line, its separators plain or percent-encoded (a
// URL carried in another's parameter). Its value ends where the URL does, or the JSON
// string around it.
const SECRET_QUERY_PARAM = new RegExp(
  `((?:[?&]|%3F|%26)(?:[\\w.\\-\\[\\]]|%[0-9A-F]{2})*?(?:${SECRET_PARAM_WORDS})(?:[\\w.\\-\\[\\]]|%[0-9A-F]{2})*?(?:=|%3D))[^&#"\\s\\\\]*`,
  'gi',
);

/** True for a parameter name that holds a secret (see SECRET_PARAM_WORDS). */
export function isSecretParamName(name: string): boolean {
  return SECRET_PARAM_NAME.test(name);
}

/** The text with the value of every secret query parameter of every URL in it redacted. */
export function redactSecretQueryParams(text: string): string {
  return text.includes('=') || text.includes('%3D') || text.includes('%3d')
    ? text.replace(SECRET_QUERY_PARAM, '$1[redacted]')
    : text;
}

/**
 * pino options every logger of Syncline shares: the paths above redacted, and, as a line is
 * written, the secret query parameters of any URL in it (a request's, or one an error
 * message quotes).
 */
export const REDACTION_OPTIONS = {
  redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  hooks: { streamWrite: redactSecretQueryParams },
} as const satisfies LoggerOptions;

export function createLogger(
  options: { level: string; name?: string } & LoggerOptions,
  destination?: DestinationStream,
): Logger {
  const all = { ...options, ...REDACTION_OPTIONS };
  return destination ? pino(all, destination) : pino(all);
}

export type { DestinationStream, Logger };
