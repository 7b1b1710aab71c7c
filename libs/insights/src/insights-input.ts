import { err, ok, type Result } from '@syncline/core';
import { z } from 'zod';
import {
  ACTIVITY_KINDS,
  type ActivityDiff,
  CONNECTION_STATUSES,
  type InsightsError,
  type InsightsInput,
  type InsightsParams,
  type PersonId,
} from './types';

/** Event times from 1970 to 2200: anything else is a unit mistake (seconds, microseconds). */
const MAX_EVENT_TIME = Date.UTC(2200, 0, 1);
const eventTime = z.number().int().min(0).max(MAX_EVENT_TIME);
const id = z.string().min(1).max(256);

const activityDiff = z
  .object({
    activityId: id,
    personIds: z
      .array(id)
      .min(1)
      .max(500)
      .refine((ids) => new Set(ids).size === ids.length, 'personIds repeat a person'),
    kind: z.enum(ACTIVITY_KINDS),
    eventTime,
    sign: z.union([z.literal(1), z.literal(-1)]),
    sourceConnectionId: id,
    threadId: id.optional(),
  })
  .strict();

const input = z.discriminatedUnion('type', [
  z.object({ type: z.literal('diff'), diff: activityDiff }).strict(),
  z.object({ type: z.literal('watermark'), connectionId: id, eventTime }).strict(),
  z.object({ type: z.literal('connect'), connectionId: id, eventTime }).strict(),
  z.object({ type: z.literal('status'), connectionId: id, status: z.enum(CONNECTION_STATUSES) }).strict(),
  z.object({ type: z.literal('disconnect'), connectionId: id }).strict(),
  z.object({ type: z.literal('tick'), now: z.number().int().min(0) }).strict(),
  z
    .object({
      type: z.literal('replace'),
      personId: id,
      contributions: z.array(
        z.object({ kind: z.enum(ACTIVITY_KINDS), eventTime, threadId: id.optional() }).strict(),
      ),
    })
    .strict(),
]);

/** Checks one input at the boundary; nothing unchecked reaches the state. */
export function parseInput(value: unknown): Result<InsightsInput, InsightsError> {
  const parsed = input.safeParse(value);
  if (!parsed.success) return err({ code: 'InvalidInput', message: z.prettifyError(parsed.error) });
  const v = parsed.data;
  if (v.type === 'replace')
    return ok({
      type: 'replace',
      personId: v.personId as PersonId,
      contributions: v.contributions.map((c) => ({
        kind: c.kind,
        eventTime: c.eventTime,
        threadId: c.kind === 'meeting' ? undefined : c.threadId,
      })),
    });
  if (v.type !== 'diff') return ok(v);
  const diff: ActivityDiff = {
    ...v.diff,
    personIds: v.diff.personIds as PersonId[],
    // Only mails pair into replies; a meeting's thread means nothing here.
    threadId: v.diff.kind === 'meeting' ? undefined : v.diff.threadId,
  };
  return ok({ type: 'diff', diff });
}

const params = z
  .object({
    timeZone: z.string().min(1),
    allowedLatenessMs: z.number().int().min(0),
    earlyIntervalMs: z.number().int().min(0),
    maxReplyGapMs: z.number().int().min(1),
  })
  .strict();

export function parseParams(value: unknown): Result<InsightsParams, InsightsError> {
  const parsed = params.safeParse(value);
  return parsed.success
    ? ok(parsed.data)
    : err({ code: 'InvalidParams', message: z.prettifyError(parsed.error) });
}
