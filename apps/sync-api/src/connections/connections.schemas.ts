import { CONNECTION_STATUSES, type ConnectionStatus, PROVIDER_KEYS } from '@syncline/core';
import { z } from 'zod';

export { CONNECTION_STATUSES, type ConnectionStatus };

export const createConnectionBody = z.strictObject({
  provider: z.enum(PROVIDER_KEYS),
  externalAccountId: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .describe('The account id in the provider (portal id, email).'),
  displayName: z.string().trim().min(1).max(200).optional(),
  // The shape depends on the provider (OAuth tokens, a HubSpot private app token); the
  // connector checks it. Here it only has to be a non-empty object, sealed as a whole.
  credentials: z
    .record(z.string().min(1), z.unknown())
    .refine((credentials) => Object.keys(credentials).length > 0, 'must not be empty')
    .describe('For example {accessToken, refreshToken, expiresAt} or {privateAppToken}. Never returned.'),
  dryRun: z
    .boolean()
    .default(false)
    .describe(
      'Connect in dry run: its backfill is read as usual but held out of the sync, so nothing is written ' +
        'anywhere until `POST /{id}/enable`; `GET /{id}/dry-run` reports what enabling it would do.',
    ),
});
export type CreateConnectionBody = z.output<typeof createConnectionBody>;

export const replaceCredentialsBody = createConnectionBody.pick({ credentials: true });
export type ReplaceCredentialsBody = z.output<typeof replaceCredentialsBody>;

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
  status: z.enum(CONNECTION_STATUSES),
  statusReason: z.string().nullable(),
  watermark: z.iso
    .datetime()
    .nullable()
    .describe('Event time up to which this connection is known complete.'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  hasCredentials: z.boolean(),
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
