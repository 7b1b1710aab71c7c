import { CONNECTION_STATUSES, PROVIDER_KEYS } from '@syncline/core';
import { z } from 'zod';

export const connectionHealth = z.object({
  id: z.uuid(),
  provider: z.enum(PROVIDER_KEYS),
  status: z.enum(CONNECTION_STATUSES),
  statusReason: z.string().nullable(),
  backfill: z.object({
    seen: z.number().int().describe('Records read by the current (or last) backfill.'),
    total: z.number().int().nullable().describe("The provider's estimate of the total, when it gives one."),
  }),
  lastPullAt: z.iso.datetime().nullable(),
  lastSuccessAt: z.iso.datetime().nullable().describe('End of the last pull that succeeded.'),
  lastErrorCode: z
    .string()
    .nullable()
    .describe('Error code of the last failed pull (RateLimited, AuthRevoked, …).'),
  watermark: z.iso
    .datetime()
    .nullable()
    .describe('Event time up to which this connection is known complete.'),
  watermarkDelaySeconds: z
    .number()
    .int()
    .nullable()
    .describe('How far the watermark is behind now, in seconds; null without a watermark.'),
  lag: z.object({
    events: z
      .number()
      .int()
      .describe("Events of this connection on the log past the `sync` group's committed offsets."),
  }),
  pendingWrites: z
    .number()
    .int()
    .describe('Outbox rows for this connection waiting to be sent, or being sent.'),
});
export type ConnectionHealth = z.output<typeof connectionHealth>;

export const syncHealthView = z.object({
  connections: z.array(connectionHealth),
  deadLetters: z.object({ open: z.number().int().describe('Open dead letters of the workspace.') }),
  checkedAt: z.iso.datetime(),
});
export type SyncHealthView = z.output<typeof syncHealthView>;
