import { baseEnvSchema, Keyring, keyringEnvSchema, parseEnv, providerEnvSchema } from '@syncline/core';
import { z } from 'zod';

const url = z.url({ protocol: /^https?$/ });

/** What the HubSpot app asks for at consent; HubSpot refuses an authorize request whose scopes differ from the app's. */
export const DEFAULT_HUBSPOT_OAUTH_SCOPES = [
  'oauth',
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  'crm.objects.deals.read',
  'crm.objects.deals.write',
  'crm.objects.owners.read',
  'sales-email-read',
].join(' ');

const appEnvObject = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  ...keyringEnvSchema.shape,
  ...providerEnvSchema.shape,
  /** HubSpot's consent page; the emulator serves it at `<HUBSPOT_API_BASE_URL>/oauth/authorize`. */
  HUBSPOT_OAUTH_AUTHORIZE_URL: url.default('https://app.hubspot.com/oauth/authorize'),
  /** Space-separated; must match the scopes set on the HubSpot app. */
  HUBSPOT_OAUTH_SCOPES: z.string().trim().min(1).default(DEFAULT_HUBSPOT_OAUTH_SCOPES),
  /** Google's consent page; the emulator serves it at `<GOOGLE_API_ROOT_URL>o/oauth2/v2/auth`. */
  GOOGLE_OAUTH_AUTHORIZE_URL: url.default('https://accounts.google.com/o/oauth2/v2/auth'),
  /**
   * Where the browser reaches this API after consent (the redirect URIs registered with the
   * providers are `<this>/api/v1/connections/oauth/{hubspot|google|microsoft}/callback`); PUBLIC_BASE_URL when unset.
   */
  OAUTH_CALLBACK_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), url.optional()),
  /**
   * "Sign in with Google" (or any OpenID Connect provider, by its issuer URL):
   * `https://accounts.google.com` for Google, the emulator's base URL in the demo and tests.
   * Unset: no such sign-in, only magic links. The client's redirect URI is
   * `<PUBLIC_BASE_URL>/api/v1/auth/oidc/callback`.
   */
  OIDC_ISSUER_URL: z.preprocess((v) => (v === '' ? undefined : v), url.optional()),
  OIDC_CLIENT_ID: z.preprocess((v) => (v === '' ? undefined : v), z.string().trim().min(1).optional()),
  OIDC_CLIENT_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /**
   * The email domains whose people may sign in with the OpenID Connect provider
   * (comma-separated, e.g. `acme.com,acme.co.uk`); unset or empty: any domain (membership
   * still decides).
   */
  AUTH_ALLOWED_DOMAINS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const domains = (value ?? '')
        .split(',')
        .map((domain) => domain.trim().toLowerCase().replace(/^@/, ''))
        .filter((domain) => domain !== '');
      const bad = domains.filter((domain) => !/^(?:[a-z0-9-]+\.)+[a-z0-9-]{2,}$/.test(domain));
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `not domains like acme.com: ${bad.join(', ')}` });
        return z.NEVER;
      }
      return domains;
    }),
  /**
   * Port of the API's Prometheus `/metrics`, its own (the API's port is public); 0 turns it
   * off. Not the workers' METRICS_PORT (9464), so both run on one host with the defaults.
   */
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9465),
  API_METRICS_HOST: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).default('127.0.0.1')),
  /** Requests one API key may make per 10 s, across every API process (Redis); 0 turns the limit off. */
  /**
   * How far back the sync health history goes (the workers' setting of the same name deletes
   * older samples): the most hours `GET /health/sync/history` answers for.
   */
  HEALTH_HISTORY_RETENTION_HOURS: z.coerce.number().int().min(1).max(8_760).default(72),
  /**
   * The workspace whose admins may open the queue dashboard (/admin/queues). Its jobs are every
   * workspace's (ids, errors, payloads), so it is for the deployment's operators alone. Unset:
   * the admins of the deployment's only workspace, and nobody once there are several.
   */
  QUEUE_DASHBOARD_WORKSPACE_ID: z.string().uuid().optional(),
  API_RATE_LIMIT_PER_10S: z.coerce.number().int().min(0).default(600),
  /**
   * Failed authentications one client address may make per minute, across every API process
   * (Redis); past it the address is refused (429) for the rest of the minute. 0 turns it off.
   */
  API_AUTH_FAILURES_PER_MIN: z.coerce.number().int().min(0).default(30),
  /**
   * The built web app (`npm run web:build` writes apps/web/dist), served at `/` from the API's own
   * origin; unset: that folder. A folder without an index.html serves no app (the API still runs).
   */
  WEB_DIST_DIR: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /**
   * Which proxies in front of the API to believe about the client's address (X-Forwarded-For),
   * as Fastify's `trustProxy`: `true` (any), or their addresses and CIDR ranges separated by
   * commas. Unset: none, the client is the socket's peer.
   */
  /**
   * Where sign-in links and invitations are mailed, `smtp://` or `smtps://` with any
   * credentials in the URL. Unset: nothing is mailed (a warning says so; `cli sign-in-link`
   * still prints a link). The emulators' catch-all listens on smtp://127.0.0.1:4025.
   */
  SMTP_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url({ protocol: /^smtps?$/ }).optional()),
  MAIL_FROM: z.string().trim().min(3).default('Syncline <no-reply@syncline.local>'),
  /** Sign-in links one address may ask for per hour, and one client address, across every API process. */
  MAGIC_LINKS_PER_EMAIL_PER_HOUR: z.coerce.number().int().min(0).default(5),
  MAGIC_LINKS_PER_IP_PER_HOUR: z.coerce.number().int().min(0).default(30),
  TRUST_PROXY: z
    .string()
    .trim()
    .optional()
    .transform((value): boolean | string => {
      if (value === undefined || value === '' || value === 'false') return false;
      return value === 'true' ? true : value;
    }),
});

/** Every setting the API reads, parsed once at start. */
export const appConfigSchema = appEnvObject.superRefine((env, ctx) => {
  // The keyring refuses to build when the active key is missing; say so here, by name,
  // instead of failing later with a KeyringError.
  // An issuer without its client would fail at the first sign-in; say so at start, by name.
  if (env.OIDC_ISSUER_URL !== undefined) {
    for (const name of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is required when OIDC_ISSUER_URL is set' });
      }
    }
  }
  const active = env.SYNCLINE_ENCRYPTION_ACTIVE_KEY;
  if (active === undefined) return;
  try {
    Keyring.parse(env.SYNCLINE_ENCRYPTION_KEYS, active);
  } catch {
    ctx.addIssue({
      code: 'custom',
      path: ['SYNCLINE_ENCRYPTION_ACTIVE_KEY'],
      message: 'must name one of the keys in SYNCLINE_ENCRYPTION_KEYS',
    });
  }
});
export type AppConfig = Readonly<z.output<typeof appConfigSchema>>;

/** The base of the OAuth redirect URIs, without a trailing slash. */
export function oauthCallbackBaseUrl(config: AppConfig): string {
  return (config.OAUTH_CALLBACK_BASE_URL ?? config.PUBLIC_BASE_URL).replace(/\/+$/, '');
}

/** The CLI only talks to the database, so it does not demand the encryption keys. */
export const cliConfigSchema = appEnvObject.pick({
  NODE_ENV: true,
  DATABASE_URL: true,
  LOG_LEVEL: true,
  PUBLIC_BASE_URL: true,
});
export type CliConfig = Readonly<z.output<typeof cliConfigSchema>>;

/** Injection token for the parsed AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Throws a ConfigError naming every bad setting. */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  return Object.freeze(parseEnv(appConfigSchema, env));
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  return Object.freeze(parseEnv(cliConfigSchema, env));
}
