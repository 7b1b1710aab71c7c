import { z } from 'zod';

const url = z.url({ protocol: /^https?$/ });
const optionalText = z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional());

/**
 * Where the providers are and who we are to them. Defaults are the real providers, so one
 * build runs against the emulators (tests, the demo) or the real APIs by configuration alone.
 */
export const providerEnvSchema = z.object({
  HUBSPOT_API_BASE_URL: url.default('https://api.hubapi.com'),
  /** HubSpot's OAuth token endpoint; defaults to `<HUBSPOT_API_BASE_URL>/oauth/v1/token`. */
  HUBSPOT_TOKEN_URL: z.preprocess((v) => (v === '' ? undefined : v), url.optional()),
  HUBSPOT_CLIENT_ID: optionalText,
  /** Also the key HubSpot signs webhooks with. */
  HUBSPOT_CLIENT_SECRET: optionalText,
  /** Our HubSpot app id: its writes come back with `sourceId` = this id. */
  HUBSPOT_APP_ID: optionalText,
  /** HubSpot's app, where a person opens a record (the source links' `url`); the emulator serves record pages too. */
  HUBSPOT_APP_URL: url.default('https://app.hubspot.com'),
  GOOGLE_API_ROOT_URL: url.default('https://www.googleapis.com/'),
  GOOGLE_TOKEN_URL: url.default('https://oauth2.googleapis.com/token'),
  GOOGLE_CLIENT_ID: optionalText,
  GOOGLE_CLIENT_SECRET: optionalText,
  /** Microsoft Graph's origin (the SDK adds `/v1.0`); the emulator serves it over HTTPS. */
  MICROSOFT_GRAPH_URL: url.default('https://graph.microsoft.com'),
  /** The Microsoft identity platform's origin: `/{tenant}/oauth2/v2.0/authorize|token` under it. */
  MICROSOFT_LOGIN_URL: url.default('https://login.microsoftonline.com'),
  /** Who may sign in: `common` (work and personal accounts), `organizations`, or one tenant's id. */
  MICROSOFT_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/)
    .default('common'),
  MICROSOFT_CLIENT_ID: optionalText,
  MICROSOFT_CLIENT_SECRET: optionalText,
  /** The bearer token our Gmail Pub/Sub push subscription sends. */
  GMAIL_PUSH_TOKEN: optionalText,
  /** The public base URL providers call back (webhooks, watch channels), e.g. https://sync.example.com. */
  PUBLIC_BASE_URL: url.default('http://127.0.0.1:3000'),
});
export type ProviderEnv = z.output<typeof providerEnvSchema>;

/** The connectors' endpoints from the provider settings. */
export function providerEndpoints(env: ProviderEnv): {
  hubspotBaseUrl: string;
  hubspotTokenUrl: string;
  googleRootUrl: string;
  googleTokenUrl: string;
  microsoftGraphUrl: string;
  microsoftTokenUrl: string;
  microsoftAuthorizeUrl: string;
} {
  const hubspotBaseUrl = env.HUBSPOT_API_BASE_URL.replace(/\/+$/, '');
  const login = `${env.MICROSOFT_LOGIN_URL.replace(/\/+$/, '')}/${env.MICROSOFT_TENANT}/oauth2/v2.0`;
  return {
    hubspotBaseUrl,
    hubspotTokenUrl: env.HUBSPOT_TOKEN_URL ?? `${hubspotBaseUrl}/oauth/v1/token`,
    googleRootUrl: env.GOOGLE_API_ROOT_URL.endsWith('/')
      ? env.GOOGLE_API_ROOT_URL
      : `${env.GOOGLE_API_ROOT_URL}/`,
    googleTokenUrl: env.GOOGLE_TOKEN_URL,
    microsoftGraphUrl: env.MICROSOFT_GRAPH_URL.replace(/\/+$/, ''),
    microsoftTokenUrl: `${login}/token`,
    microsoftAuthorizeUrl: `${login}/authorize`,
  };
}
