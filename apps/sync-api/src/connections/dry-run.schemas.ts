import { CONNECTION_STATUSES, PROVIDER_KEYS } from '@syncline/core';
import { DRY_RUN_REPORT_LIMIT } from '@syncline/jobs';
import { z } from 'zod';

export const MAX_DRY_RUN_LIST = DRY_RUN_REPORT_LIMIT;

export const dryRunQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_DRY_RUN_LIST)
    .default(100)
    .describe('Most items in each list of the report; `summary` always has the totals.'),
  refresh: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe('Compute the report again even if the backfill has not moved on since the stored one.'),
});
export type DryRunQuery = z.output<typeof dryRunQuery>;

const source = z.object({
  kind: z.string().describe('`connection` or `user`.'),
  id: z.string(),
});
const candidate = z.object({ value: z.unknown(), source, eventTime: z.string() });

export const dryRunReportView = z
  .object({
    connectionId: z.uuid(),
    workspaceId: z.uuid(),
    provider: z.enum(PROVIDER_KEYS),
    displayName: z.string().nullable(),
    status: z.string().describe("The connection's status (its backfill goes on while it is in dry run)."),
    complete: z
      .boolean()
      .describe(
        'Its backfill has finished: the report covers every record read. False while backfilling: a partial ' +
          'report, and the creates the connection itself would be owed are left out until the backfill ends.',
      ),
    backfill: z.object({ seen: z.number().int(), estimatedTotal: z.number().int().nullable() }),
    computedAt: z.iso.datetime().describe('When the workers computed this report.'),
    stale: z
      .boolean()
      .describe(
        'The backfill has read more since `computedAt` and a newer report is still being computed: ask again shortly.',
      ),
    staged: z
      .object({ changes: z.number().int(), records: z.number().int() })
      .describe('What its pulls read and hold for the enable.'),
    summary: z
      .object({
        links: z.number().int(),
        creations: z.number().int(),
        changes: z.number().int(),
        conflicts: z.number().int(),
        possibleDuplicates: z.number().int(),
        writes: z.number().int(),
        failures: z.number().int(),
      })
      .describe('The total of each list below.'),
    links: z
      .array(
        z.object({
          entityType: z.string(),
          externalId: z.string(),
          entityId: z.uuid(),
          displayName: z.string().nullable(),
        }),
      )
      .describe('Its records that would be linked to an existing unified record, and to which.'),
    creations: z
      .array(
        z.object({
          entityId: z
            .uuid()
            .describe('The id the new record would have (ids are derived, so enabling gives this one).'),
          entityType: z.string(),
          displayName: z.string().nullable(),
          externalIds: z.array(z.string()),
          fields: z.record(z.string(), z.unknown()),
        }),
      )
      .describe('New unified records its records would create.'),
    changes: z
      .array(
        z.object({
          entityId: z.uuid(),
          entityType: z.string(),
          displayName: z.string().nullable(),
          fields: z.record(
            z.string(),
            z.object({ from: z.unknown(), to: z.unknown(), source: source.nullable() }),
          ),
        }),
      )
      .describe('Existing unified records whose fields would change: old → new value per field.'),
    conflicts: z
      .array(
        z.object({
          id: z.uuid(),
          entityId: z.uuid(),
          entityType: z.string(),
          field: z.string(),
          kind: z.string().describe('`concurrent` or `late`.'),
          policy: z.string(),
          status: z
            .string()
            .describe('`open`: would wait in the conflicts inbox; `resolved`: settled by the policy.'),
          candidates: z.array(candidate),
          winner: candidate.nullable(),
        }),
      )
      .describe('Conflicts it would raise.'),
    possibleDuplicates: z
      .array(
        z.object({
          id: z.uuid(),
          entityType: z.string(),
          entityA: z.uuid(),
          entityB: z.uuid(),
          score: z.number(),
        }),
      )
      .describe('Ambiguous matches it would leave for review (a new record each, never merged silently).'),
    writes: z
      .array(
        z.object({
          connectionId: z.uuid(),
          provider: z.enum(PROVIDER_KEYS),
          displayName: z.string().nullable(),
          self: z.boolean().describe('Writes to this connection itself (what the other systems bring it).'),
          total: z.number().int(),
          counts: z
            .record(z.string(), z.number().int())
            .describe(
              'Writes by operation: create, update, delete; associate and dissociate for associations (their `fields` name the other end).',
            ),
          sample: z.array(
            z.object({
              op: z.string(),
              entityId: z.uuid(),
              entityType: z.string(),
              externalId: z.string().nullable(),
              fields: z.record(z.string(), z.unknown()),
            }),
          ),
        }),
      )
      .describe('Writes it would cause, per connected system, with a few of each operation.'),
    waitingTargets: z
      .array(
        z.object({
          connectionId: z.uuid(),
          provider: z.enum(PROVIDER_KEYS),
          displayName: z.string().nullable(),
          status: z.enum(CONNECTION_STATUSES).describe("The system's connection status."),
          reconciled: z.boolean().describe('Its first sync has been linked to the workspace.'),
        }),
      )
      .describe(
        'Connected systems owed no creates yet (on their first sync, paused or awaiting credentials): the ' +
          'records they lack are decided once they are live and reconciled, so `writes` leaves them out.',
      ),
    failures: z
      .array(
        z.object({ eventKey: z.string(), entityType: z.string(), externalId: z.string(), error: z.string() }),
      )
      .describe('Changes the sync stage would refuse (they would go to the dead letters).'),
    truncated: z.boolean().describe('Some list was cut at `limit`.'),
  })
  .describe(
    "What enabling the connection would do, computed by the workers' sync stage over its backfill in a transaction that is rolled back.",
  );
export type DryRunReportView = z.output<typeof dryRunReportView>;

export const dryRunComputingView = z.object({
  computing: z.literal(true),
  connectionId: z.uuid(),
  provider: z.enum(PROVIDER_KEYS),
  externalAccountId: z.string(),
  displayName: z.string().nullable(),
  backfill: z
    .object({ seen: z.number().int(), estimatedTotal: z.number().int().nullable() })
    .describe('What its backfill has read so far.'),
  retryAfterSeconds: z.number().int().describe('Ask again after this many seconds (also `Retry-After`).'),
  lastFailure: z
    .object({ at: z.iso.datetime(), reason: z.string() })
    .nullable()
    .describe("The workers' last try at this report failed: why. `refresh=true` tries again."),
});
export type DryRunComputingView = z.output<typeof dryRunComputingView>;
