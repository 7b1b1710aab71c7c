import { CONNECTION_STATUSES, PROVIDER_KEYS } from '@syncline/core';
import { z } from 'zod';

export const connectionHealth = z.object({
  id: z.uuid(),
  provider: z.enum(PROVIDER_KEYS),
  displayName: z.string().nullable().describe('The name an admin gave it.'),
  externalAccountId: z.string().describe("The provider's account (portal id, Google address)."),
  dryRun: z.boolean().describe('In dry run: read and staged, nothing of it synced.'),
  hasCredentials: z.boolean().describe('Whether credentials are stored; without them it needs reconnecting.'),
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
  insights: z
    .object({
      completeUpTo: z.iso
        .datetime()
        .nullable()
        .describe(
          'The activity insights are final before this instant (null before every connection vouched once).',
        ),
      heldBy: z
        .array(z.object({ connectionId: z.uuid(), watermark: z.iso.datetime().nullable() }))
        .describe('The connections the watermark waits for: a paused or failing one holds it here.'),
      late: z.int().min(0).describe('Activities that came after their day closed and revised it.'),
      sideOutput: z
        .int()
        .min(0)
        .describe('Activities later than the allowed lateness: counted and kept, changing no result.'),
      timeZone: z
        .string()
        .describe(
          'The IANA zone the insights’ days are cut in now; after a change of the workspace’s zone ' +
            '(PUT /api/v1/workspace/time-zone), the new one once the sync stage has recomputed in it.',
        ),
    })
    .describe('The activity insights’ event-time progress.'),
  checkedAt: z.iso.datetime(),
});
export type SyncHealthView = z.output<typeof syncHealthView>;

export const syncHealthHistoryQuery = z.object({
  hours: z.coerce
    .number()
    .int()
    .min(1)
    .default(24)
    .describe('How many hours back from now; at most the history kept (HEALTH_HISTORY_RETENTION_HOURS).'),
  connectionId: z.uuid().optional().describe("Only this connection's series."),
  scope: z
    .enum(['all', 'workspace'])
    .default('all')
    .describe("`workspace`: the workspace's series only, without a series per connection (smaller)."),
});
export type SyncHealthHistoryQuery = z.output<typeof syncHealthHistoryQuery>;

const historyPoint = z.object({
  at: z.iso.datetime().describe("The bucket's start."),
  lagEvents: z.number().int().describe('Largest lag (events past the sync group) sampled in the bucket.'),
  watermarkDelaySeconds: z
    .number()
    .int()
    .nullable()
    .describe('Largest watermark delay sampled in the bucket; null without a watermark.'),
  pendingWrites: z.number().int().describe('Largest number of writes waiting sampled in the bucket.'),
  writesOk: z.number().int().describe('Writes sent during the bucket.'),
  writesFailed: z
    .record(z.string(), z.number().int())
    .describe('Writes refused (dead-lettered) during the bucket, by error code.'),
});

export const syncHealthHistoryView = z.object({
  hours: z.number().int(),
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  bucketSeconds: z
    .number()
    .int()
    .describe(
      'Width of a point: samples are taken every minute, merged into buckets so a series stays small.',
    ),
  connections: z.array(
    z.object({
      id: z.uuid(),
      provider: z.enum(PROVIDER_KEYS),
      displayName: z.string().nullable(),
      points: z.array(historyPoint),
    }),
  ),
  workspace: z
    .array(
      z.object({
        at: z.iso.datetime(),
        consumerLag: z
          .number()
          .int()
          .describe("The workspace's events past the sync group's committed offsets."),
        deadLettersOpen: z.number().int(),
        writesOk: z.number().int().describe("Writes sent during the bucket, its connections' summed."),
        writesFailed: z
          .record(z.string(), z.number().int())
          .describe("Writes refused during the bucket by error code, its connections' summed."),
        pendingWrites: z.number().int().describe("Its connections' largest backlogs in the bucket, summed."),
      }),
    )
    .describe("The workspace's figures per bucket (of the one connection, with `connectionId`)."),
});
export type SyncHealthHistoryView = z.output<typeof syncHealthHistoryView>;
