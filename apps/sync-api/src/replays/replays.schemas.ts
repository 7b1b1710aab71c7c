import { z } from 'zod';
import { nextCursorField, pageQuery } from '../admin/page-cursor';
import { actorView } from '../auth/actor-ref';

export const REPLAY_MODES = ['preview', 'apply'] as const;
export const REPLAY_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

const fromSchema = z
  .union([
    z.literal('beginning').describe('Every record of the workspace.'),
    z.strictObject({
      eventTime: z.iso
        .datetime({ offset: true })
        .describe(
          'Every record with an event at or after this time is rebuilt, from its whole history (and what it is tied to).',
        ),
    }),
  ])
  .describe('Which records to rebuild.');

export const createReplayBody = z.strictObject({
  from: fromSchema,
  mode: z
    .enum(REPLAY_MODES)
    .describe(
      '`preview`: compute what would change, on private copies, writing nothing; `apply`: rebuild the live records and owe the connected systems the final values.',
    ),
});
export type CreateReplayBody = z.output<typeof createReplayBody>;

export const replayListQuery = z.object(pageQuery);
export type ReplayListQuery = z.output<typeof replayListQuery>;

const source = z.object({ kind: z.string().describe('`connection` or `user`.'), id: z.string() });
const entityRef = z.object({
  entityId: z.uuid(),
  entityType: z.string(),
  displayName: z.string().nullable(),
});

export const replayReportView = z
  .object({
    mode: z.enum(REPLAY_MODES),
    computedAt: z.iso.datetime(),
    scope: z
      .object({ records: z.number().int(), entities: z.number().int(), events: z.number().int() })
      .describe('Source records rebuilt, unified records that came out of it, events folded.'),
    offsets: z
      .record(z.string(), z.number().int())
      .describe(
        "The sync stage's committed offset per partition: the events folded are those it had merged; later ones it merges after.",
      ),
    summary: z
      .object({
        changes: z.number().int(),
        created: z.number().int(),
        gone: z.number().int(),
        conflictsAppeared: z.number().int(),
        conflictsDisappeared: z.number().int(),
        linksMoved: z.number().int(),
        writes: z.number().int(),
        failures: z.number().int(),
      })
      .describe('The total of each list below.'),
    changes: z
      .array(
        entityRef.extend({
          fields: z.record(
            z.string(),
            z.object({
              from: z.unknown(),
              to: z.unknown(),
              source: source.nullable().describe('Where the new value comes from.'),
            }),
          ),
        }),
      )
      .describe('Records whose field values change (preview: would change): old → new per field.'),
    created: z.array(entityRef).describe('Records the rebuild makes that did not exist.'),
    gone: z.array(entityRef).describe('Records that existed and do not come out of the rebuild.'),
    conflicts: z
      .array(
        z.object({
          id: z.uuid(),
          entityId: z.uuid(),
          field: z.string(),
          policy: z.string(),
          change: z.enum(['appeared', 'disappeared']),
          before: z.string().nullable().describe('`open`, `resolved`, or null when it did not exist.'),
          after: z.string().nullable().describe('`open`, `resolved`, or null when it is gone.'),
        }),
      )
      .describe('Conflicts that appear (new, or open) or disappear (gone, or no longer open).'),
    links: z
      .array(
        z.object({
          connectionId: z.uuid(),
          entityType: z.string(),
          externalId: z.string(),
          from: z.uuid().nullable(),
          to: z.uuid().nullable(),
        }),
      )
      .describe('Source records that move to another unified record (null: not linked).'),
    writes: z
      .array(
        z.object({
          connectionId: z.uuid(),
          entityId: z.uuid(),
          op: z.string(),
          fields: z.record(z.string(), z.unknown()),
        }),
      )
      .describe('Writes owed to connected systems that were not owed before: final values only.'),
    failures: z
      .array(
        z.object({ eventKey: z.string(), entityType: z.string(), externalId: z.string(), error: z.string() }),
      )
      .describe('Events the sync stage refused (as the live stage would dead-letter them).'),
    truncated: z.boolean().describe('Some list was cut (at 100 items); `summary` has the totals.'),
  })
  .describe('What the replay changed (apply) or would change (preview).');

export const replayView = z.object({
  id: z.uuid(),
  mode: z.enum(REPLAY_MODES),
  from: fromSchema,
  status: z
    .enum(REPLAY_STATUSES)
    .describe('`queued` → `running` → `succeeded`, or `failed` with `failureReason`.'),
  progress: z.object({
    eventsTotal: z.number().int().nullable().describe('Events to fold; null until counted.'),
    eventsReplayed: z.number().int(),
  }),
  failureReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
  createdBy: actorView
    .extend({ label: z.string().nullable().describe("The member's name (else email), or the key's name.") })
    .describe('The member or API key that asked for it.'),
  startedAt: z.iso.datetime().nullable(),
  finishedAt: z.iso.datetime().nullable(),
  report: replayReportView.nullable().describe('Once succeeded.'),
});
export type ReplayView = z.output<typeof replayView>;

/** 409 `replay_running`: the replay in the way, to follow instead. */
export const replayRunningBody = z.object({
  error: z.object({
    code: z.literal('replay_running'),
    message: z.string(),
    replayId: z.uuid().describe('The queued or running replay (GET /api/v1/replays/{id}).'),
  }),
});

export const replayPage = z.object({ data: z.array(replayView), nextCursor: nextCursorField });
export type ReplayPage = z.output<typeof replayPage>;
