import { PROVIDER_KEYS } from '@syncline/core';
import { z } from 'zod';

export const CONNECTION_STATUSES = [
  'pending',
  'backfilling',
  'live',
  'paused',
  'needs_reauth',
  'error',
  'disconnected',
] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export const createConnectionBody = z.object({
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
});
export type CreateConnectionBody = z.output<typeof createConnectionBody>;

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
});
export type ConnectionView = z.output<typeof connectionView>;

export const connectionListView = z.object({ data: z.array(connectionView) });
