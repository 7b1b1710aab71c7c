import { ENTITY_TYPES } from '@syncline/core';
import { z } from 'zod';
import { MAX_PAGE_SIZE, nextCursorField } from '../admin/page-cursor';
import { actorView } from '../auth/actor-ref';

/**
 * The path names entity types as the merge and `field_policy` do (`person`, `email_activity`),
 * not as record collections (`people`, `email-activities`): policies belong to the type.
 */
export const entityTypeParam = z
  .enum(ENTITY_TYPES)
  .describe(
    'The entity type, as spelled in `recordType` (person, company, deal, meeting, task, email_activity).',
  );

/** The literal that ranks a person editing in Syncline in a `priority` order. */
export const USER_SOURCE = 'user';
const MAX_SOURCES = 50;
const MAX_FIELDS = 200;

const prioritySource = z
  .union([z.literal(USER_SOURCE), z.uuid()])
  .describe('A connection id of this workspace, or `user` for any person editing in Syncline.');

const priorityOrder = z
  .array(prioritySource)
  .min(1)
  .max(MAX_SOURCES)
  .superRefine((order, ctx) => {
    const seen = new Set<string>();
    order.forEach((source, index) => {
      const key = source.toLowerCase();
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [index], message: 'listed twice' });
      seen.add(key);
    });
  })
  .describe('Sources best first; a source not listed ranks after every listed one.');

export const POLICY_KINDS = ['lww', 'priority', 'manual', 'union'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export const fieldPolicy = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('lww').describe('Latest event time wins (the default).') }),
  z.strictObject({
    kind: z.literal('priority').describe('The best-ranked source wins.'),
    order: priorityOrder,
  }),
  z.strictObject({
    kind: z.literal('manual').describe('Both values are kept; the conflict waits in the inbox for a person.'),
  }),
  z.strictObject({
    kind: z
      .literal('union')
      .describe('The values merge as a set; list-valued fields only (attendees, to, cc, labelIds).'),
  }),
]);
export type FieldPolicyBody = z.output<typeof fieldPolicy>;

const fieldName = z.string().min(1).max(100);

export const replacePoliciesBody = z.strictObject({
  fields: z
    .record(fieldName, fieldPolicy)
    .refine((fields) => Object.keys(fields).length <= MAX_FIELDS, `at most ${MAX_FIELDS} fields`)
    .describe(
      'The whole set: a field left out (or given `lww`) goes back to `lww`. Field names are the ' +
        "type's unified fields, or custom fields that a connection of this workspace maps.",
    ),
});
export type ReplacePoliciesBody = z.output<typeof replacePoliciesBody>;

/** `If-Match`: the set's version as returned in `version` / `ETag` (`"3"`, `3` or `W/"3"`). */
export const ifMatchVersion = z
  .string()
  .regex(/^(W\/)?"?\d{1,9}"?$/, "the policy set's version, as in the ETag")
  .transform((value) => Number(value.replace(/^W\//, '').replaceAll('"', '')))
  .optional();

export const policySetView = z.object({
  entityType: z.enum(ENTITY_TYPES),
  version: z
    .number()
    .int()
    .describe("The set's version (also the `ETag`): 0 until the first replacement, then one more per PUT."),
  fields: z
    .record(z.string(), fieldPolicy)
    .describe(
      'Every field of the type (unified fields, custom fields mapped by a connection, and any field ' +
        'with a stored policy) with the policy the merge applies to it: `lww` where none is set.',
    ),
  strategies: z
    .record(z.string(), z.array(z.enum(POLICY_KINDS)))
    .describe('The policies each field may take (`union` only for a field that holds a list).'),
  updatedAt: z.iso.datetime().nullable().describe('When the set was last replaced; null before that.'),
});
export type PolicySetView = z.output<typeof policySetView>;

const versionCursor = z
  .string()
  .regex(/^\d{1,9}$/, 'not a cursor this API returned')
  .transform(Number)
  .describe('`nextCursor` of the previous page.');

export const revisionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: versionCursor.optional(),
});
export type RevisionsQuery = z.output<typeof revisionsQuery>;

export const revisionView = z.object({
  version: z.number().int(),
  fields: z
    .record(z.string(), fieldPolicy)
    .describe('The set as this version made it: the fields given a policy other than `lww`.'),
  changedBy: actorView
    .extend({ label: z.string().nullable().describe("The member's name (else email), or the key's name.") })
    .describe('The member or API key that replaced the set.'),
  createdAt: z.iso.datetime(),
});
export type RevisionView = z.output<typeof revisionView>;

export const revisionPage = z.object({ data: z.array(revisionView), nextCursor: nextCursorField });
export type RevisionPage = z.output<typeof revisionPage>;
