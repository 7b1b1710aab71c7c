import { z } from 'zod';

export const ENTITY_TYPES = ['person', 'company', 'deal', 'meeting', 'email_activity', 'task'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export const CHANGE_OPS = ['upsert', 'delete', 'merge'] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

/** Largest serialised change the log accepts; larger payloads are a connector bug. */
export const MAX_CHANGE_BYTES = 256 * 1024;

const isoOrDate = z.union([z.date(), z.iso.datetime({ offset: true })]).transform((v) => new Date(v));

/**
 * One change to one source record, in unified field names, as a connector or a user edit
 * produces it. The event key is identical on every redelivery of the same change.
 */
export const sourceChangeSchema = z.strictObject({
  // Lower-cased so that ids compare equal to what PostgreSQL returns.
  workspaceId: z.uuid().transform((id) => id.toLowerCase()),
  connectionId: z.uuid().transform((id) => id.toLowerCase()),
  entityType: z.enum(ENTITY_TYPES),
  externalId: z.string().min(1).max(512),
  op: z.enum(CHANGE_OPS),
  eventKey: z.string().min(1).max(512),
  eventTime: isoOrDate,
  fields: z.record(z.string().min(1), z.unknown()).default({}),
  /** Event time per field where the provider has one (HubSpot property timestamps). */
  fieldTimes: z.record(z.string().min(1), isoOrDate).default({}),
  providerVersion: z.string().max(256).optional(),
  /** Origin markers (HubSpot changeSource/sourceId, Google extendedProperties.private). */
  origin: z.record(z.string(), z.unknown()).optional(),
});

export type SourceChangeInput = z.input<typeof sourceChangeSchema>;
export type SourceChange = z.output<typeof sourceChangeSchema>;
