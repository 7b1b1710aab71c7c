import { z } from 'zod';
import { pageQuery } from '../admin/page-cursor';

/** The activity types a timeline can hold. */
export const TIMELINE_TYPES = ['meeting', 'email_activity', 'task'] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

/**
 * The record collections that have a timeline: people (the activities they took part in),
 * companies and deals (those of their associated people; see entity_relation).
 */
export const TIMELINE_RESOURCES = ['people', 'companies', 'deals'] as const;
export type TimelineResource = (typeof TIMELINE_RESOURCES)[number];

const TYPE = TIMELINE_TYPES.join('|');

export const timelineQuery = z.object({
  // Keyset paging, newest first: the cursor is the last item's (occurred_at, activity id).
  ...pageQuery,
  types: z
    .string()
    .regex(new RegExp(`^(${TYPE})(,(${TYPE}))*$`), 'a comma-separated list of meeting, email_activity, task')
    .transform((value) => [...new Set(value.split(','))] as TimelineType[])
    .optional()
    .describe('Only these activity types, comma-separated (`meeting,email_activity,task`); all by default.'),
});
export type TimelineQuery = z.output<typeof timelineQuery>;

export const timelineItem = z.object({
  id: z.uuid().describe('The activity (its record in `meetings`, `email-activities` or `tasks`).'),
  type: z.enum(TIMELINE_TYPES),
  occurredAt: z.iso.datetime().describe('A meeting’s start; a mail’s `sentAt`, else `occurredAt`.'),
  title: z.string().nullable().describe('A meeting’s or task’s title, a mail’s subject.'),
  roles: z
    .array(z.enum(['organizer', 'attendee', 'from', 'to', 'cc', 'bcc']))
    .describe(
      'What the record was in it (for a company or deal: what its people were): organizer or attendee of a meeting; from, to, cc or bcc of a mail.',
    ),
  sourceLinks: z
    .array(
      z.object({
        connectionId: z.uuid(),
        provider: z.string().nullable().describe('Null when the connection has since been removed.'),
        externalId: z.string(),
        url: z
          .string()
          .nullable()
          .describe(
            'The page that shows it in its own system (Google Calendar, Gmail, Google Tasks), if any.',
          ),
      }),
    )
    .describe('Where the activity lives (its calendar event, its message).'),
});
export type TimelineItem = z.output<typeof timelineItem>;

export const timelinePage = z.object({
  recordId: z.uuid().describe('The record whose timeline this is (the survivor, for a merged-away id).'),
  data: z.array(timelineItem).describe('Newest first.'),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
});
export type TimelinePage = z.output<typeof timelinePage>;
