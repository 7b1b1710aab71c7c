import { CONNECTION_STATUSES, type ConnectionStatus, PROVIDER_KEYS, type ProviderKey } from '@syncline/core';
import { z } from 'zod';

export { CONNECTION_STATUSES, type ConnectionStatus };

/** Providers' tokens run to a couple of kilobytes (Google's access tokens up to 2,048 bytes). */
const token = z.string().min(1).max(8_192);

/** OAuth tokens, as the connect flow stores them; `expiresAt` absent: refreshed before first use. */
export const oauthCredentials = z
  .strictObject({
    accessToken: token,
    refreshToken: token.optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('When the access token stops working.'),
  })
  .describe('OAuth tokens: an access token, and the refresh token that renews it.');

/** A HubSpot private app's access token (Settings → Integrations → Private apps). */
export const privateAppCredentials = z
  .strictObject({ privateAppToken: token })
  .describe("A HubSpot private app's access token.");

/**
 * What each provider's connection may hold: one strict schema per provider, so a key of
 * another shape, a number or an array is refused (400) before anything is asked or stored.
 */
export const CREDENTIALS_SCHEMAS = {
  hubspot: z.union([privateAppCredentials, oauthCredentials]),
  'google-calendar': oauthCredentials,
  gmail: oauthCredentials,
  'google-tasks': oauthCredentials,
  'microsoft-calendar': oauthCredentials,
  'microsoft-mail': oauthCredentials,
  'microsoft-todo': oauthCredentials,
} as const satisfies Record<ProviderKey, z.ZodType>;

export type ConnectionCredentials =
  | z.output<typeof oauthCredentials>
  | z.output<typeof privateAppCredentials>;

const credentials = z
  .union([privateAppCredentials, oauthCredentials])
  .describe(
    '`{accessToken, refreshToken?, expiresAt?}` (every provider) or `{privateAppToken}` (HubSpot). ' +
      "The provider must name the account they open as the connection's `externalAccountId` " +
      '(`400 account_mismatch` otherwise; `400 credentials_refused` for tokens it refuses). Never returned.',
  );

export const createConnectionBody = z
  .strictObject({
    provider: z.enum(PROVIDER_KEYS),
    externalAccountId: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .describe(
        'The account id in the provider (HubSpot: portal id; Google: email; Microsoft: `<tenant id>:<object id>`), ' +
          'proven by the credentials.',
      ),
    displayName: z.string().trim().min(1).max(200).optional(),
    credentials,
    dryRun: z
      .boolean()
      .default(false)
      .describe(
        'Connect in dry run: its backfill is read as usual but held out of the sync, so nothing is written ' +
          'anywhere until `POST /{id}/enable`; `GET /{id}/dry-run` reports what enabling it would do.',
      ),
  })
  .superRefine((body, ctx) => credentialsFit(body.provider, body.credentials, ctx, ['credentials']));
export type CreateConnectionBody = z.output<typeof createConnectionBody>;

export const replaceCredentialsBody = z.strictObject({ credentials });
export type ReplaceCredentialsBody = z.output<typeof replaceCredentialsBody>;

/** The body of new credentials for a connection of this provider (known once the connection is read). */
export const replaceCredentialsFor = (provider: ProviderKey) =>
  replaceCredentialsBody.superRefine((body, ctx) =>
    credentialsFit(provider, body.credentials, ctx, ['credentials']),
  );

/** Adds an issue when the credentials are not of a shape this provider takes (a private app token for Google). */
export function credentialsFit(
  provider: ProviderKey,
  value: unknown,
  ctx: { addIssue(issue: z.core.$ZodRawIssue): void },
  path: PropertyKey[],
): void {
  const fit = CREDENTIALS_SCHEMAS[provider].safeParse(value);
  for (const issue of fit.error?.issues ?? []) {
    const where = issue.path.length > 0 ? ` (at ${issue.path.join('.')})` : '';
    ctx.addIssue({
      code: 'custom',
      path,
      message: `not ${provider} credentials: ${issue.message}${where}`,
      input: undefined,
    });
  }
}

export const connectionState = z
  .object({
    status: z.enum(CONNECTION_STATUSES),
    reason: z.string().nullable().describe('Why the connection is in this status, when it is not healthy.'),
    backfill: z.object({
      seen: z.number().int().describe('Records read by the current (or last) backfill.'),
      estimatedTotal: z
        .number()
        .int()
        .nullable()
        .describe("The provider's estimate of the total, when it gives one."),
    }),
    lag: z.object({
      events: z
        .number()
        .int()
        .describe("This connection's events on the log that the merge has not consumed yet."),
    }),
    watermark: z.iso.datetime().nullable(),
    watermarkDelaySeconds: z
      .number()
      .int()
      .nullable()
      .describe('How far the watermark is behind now, in seconds; null without a watermark.'),
    lastSuccessAt: z.iso.datetime().nullable().describe('End of the last pull that succeeded.'),
    lastErrorCode: z
      .string()
      .nullable()
      .describe('Error code of the last failed pull (RateLimited, AuthRevoked, …).'),
  })
  .describe('Sync progress and health.');
export type ConnectionState = z.output<typeof connectionState>;

export const connectionView = z.object({
  id: z.uuid(),
  provider: z.enum(PROVIDER_KEYS),
  externalAccountId: z.string(),
  displayName: z.string().nullable(),
  accountAddress: z
    .string()
    .nullable()
    .describe(
      'The address of the person whose mailbox, calendar or tasks these are, as the provider named it ' +
        '(Google, Microsoft); null for a CRM. A meeting or a task is copied into it only when it is theirs.',
    ),
  status: z.enum(CONNECTION_STATUSES),
  statusReason: z.string().nullable(),
  watermark: z.iso
    .datetime()
    .nullable()
    .describe('Event time up to which this connection is known complete.'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  hasCredentials: z.boolean(),
  credentialsVerifiedAt: z.iso
    .datetime()
    .nullable()
    .describe(
      'When the provider named the account of its credentials as `externalAccountId`. Null: unproven ' +
        '(made before accounts were proven, and not yet proven by the workers); it takes in nothing.',
    ),
  dryRun: z.boolean().describe('In dry run: read, but nothing of it is synced until it is enabled.'),
  state: connectionState,
});
export type ConnectionView = z.output<typeof connectionView>;

export const connectionListView = z.object({ data: z.array(connectionView) });

export const disconnectQuery = z.object({
  data: z
    .enum(['keep', 'erase'])
    .default('keep')
    .describe(
      '`keep`: the unified records keep the values the connection brought. `erase`: what only it knew goes too ' +
        '(its change events, and the records no other connection knows).',
    ),
});
export type DisconnectQuery = z.output<typeof disconnectQuery>;
