import { ENTITY_TYPES } from '@syncline/core';
import { z } from 'zod';

export const identityCheckQuery = z.strictObject({
  entityType: z.enum(ENTITY_TYPES).optional().describe('Only records of this type.'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type IdentityCheckQuery = z.output<typeof identityCheckQuery>;

const problem = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('two-records-of-one-connection'),
    connectionId: z.uuid(),
    externalIds: z.array(z.string()).describe('The records that system keeps apart.'),
  }),
  z.object({
    kind: z.literal('conflicting-keys'),
    keyKind: z.string().describe('`ical_uid` or `message_id`: one value names one thing.'),
    values: z.array(z.string()),
  }),
  z.object({
    kind: z.literal('names-disagree'),
    names: z.array(z.string()).describe('The names it was seen under, normalised.'),
  }),
]);

const remedy = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('unmerge'),
    operationId: z.uuid().describe('POST /api/v1/identity-operations/{operationId}/unmerge undoes it.'),
    absorbedId: z.uuid().describe('The record the merge absorbed, which comes back.'),
    rule: z.string().describe('Why the merge was made: `shared-key`, `person-merge`, `provider-merge`.'),
  }),
  z.object({
    kind: z
      .literal('replay')
      .describe(
        'POST /api/v1/replays decides every link again under today’s rules (its preview lists the links that move).',
      ),
  }),
]);

export const identityCheckView = z.object({
  data: z.array(
    z.object({
      entityId: z.uuid(),
      entityType: z.string(),
      displayName: z.string().nullable(),
      problems: z.array(problem),
      remedies: z.array(remedy).describe('Merges to undo first, newest first; then a replay.'),
    }),
  ),
  total: z.number().int().describe('Suspect records in all (data holds the first `limit`).'),
});
export type IdentityCheckView = z.output<typeof identityCheckView>;
