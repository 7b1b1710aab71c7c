import { ENTITY_TYPES, type EntityType } from '@syncline/core';
import { z } from 'zod';

/** The SSE event names this route sends. */
export const STREAM_EVENTS = {
  /** A record of the workspace changed: `{ id, type, version }`. */
  changed: 'record.changed',
  /** Changes may have been missed (the process lost its feed, or the caller resumed): read again. */
  refetch: 'refetch',
} as const;

/** Why a `refetch` was sent. */
export type RefetchReason = 'listener_reconnected' | 'resumed';

export const streamQuery = z.object({
  types: z
    .string()
    .max(200)
    .transform((value) =>
      value
        .split(',')
        .map((type) => type.trim())
        .filter((type) => type !== ''),
    )
    .pipe(z.array(z.enum(ENTITY_TYPES)).min(1))
    .optional()
    .describe(`Comma-separated entity types to receive (${ENTITY_TYPES.join(', ')}); all when absent.`),
});

export interface StreamQuery {
  types?: EntityType[] | undefined;
}

/** The `data` of a `record.changed` event. */
export const recordChangedData = z.object({
  id: z.string(),
  type: z.enum(ENTITY_TYPES),
  version: z.number().int(),
});
export type RecordChangedData = z.output<typeof recordChangedData>;
