import { z } from 'zod';

const counts = z
  .object({
    mailsIn: z.int().min(0).describe('Mails from them.'),
    mailsOut: z.int().min(0).describe('Mails from us to them.'),
    meetings: z.int().min(0).describe('Meetings held with them (not cancelled).'),
  })
  .describe('Activities in the window, by kind.');

const holder = z.object({
  connectionId: z.uuid(),
  provider: z.string().nullable().describe('Null when the connection has since been removed.'),
  displayName: z.string().nullable(),
  status: z
    .string()
    .nullable()
    .describe('The connection’s status: a paused or failing one holds the watermark.'),
  watermark: z.iso
    .datetime()
    .nullable()
    .describe('What it has vouched for; null before its first watermark.'),
});

/** The record collections with insights: people, and companies and deals over their people. */
export const INSIGHTS_RESOURCES = ['people', 'companies', 'deals'] as const;
export type InsightsResource = (typeof INSIGHTS_RESOURCES)[number];

export const recordInsights = z.object({
  recordId: z.uuid().describe('The record (the survivor, for a merged-away id).'),
  computedBy: z
    .literal('syncline')
    .describe('Computed by Syncline from the timeline’s activities: never edited, never a conflict.'),
  activities: z.int().min(0).describe('The activities counted, each once.'),
  sources: z
    .array(z.object({ provider: z.string().nullable(), activities: z.int().min(0) }))
    .describe(
      'Where the activities counted come from: activities per provider (one held by two systems counts in both).',
    ),
  completeUpTo: z.iso
    .datetime()
    .nullable()
    .describe(
      'The workspace’s watermark: every connected mailbox, calendar and CRM has delivered its mails and meetings from before it, so the days before it are final. Null before the first.',
    ),
  heldBy: z.array(holder).describe('The connections the watermark waits for (the lowest).'),
  timeZone: z
    .string()
    .describe(
      'The IANA zone the days of these windows are cut in (the workspace’s, once the sync stage has put it in force).',
    ),
  windowEnd: z.iso
    .date()
    .nullable()
    .describe('The last day the windows cover (in the workspace’s zone); null while nothing counts.'),
  trigger: z
    .enum(['early', 'on_time', 'late'])
    .nullable()
    .describe(
      'What emitted this result: early (the day is still open), on_time, or late (revised by a late activity).',
    ),
  lastContactedAt: z.iso.datetime().nullable(),
  lastContactedVia: z.enum(['mail_in', 'mail_out', 'meeting']).nullable(),
  lastInboundAt: z.iso.datetime().nullable().describe('Their latest mail to us.'),
  lastOutboundAt: z.iso.datetime().nullable().describe('Our latest mail to them.'),
  nextMeetingAt: z.iso.datetime().nullable().describe('The earliest meeting still on that starts after now.'),
  last7: counts,
  last30: counts,
  last90: counts,
  replies90: z.int().min(0).describe('Our replies to their mails in the last 90 days.'),
  medianReplySeconds90: z.int().min(0).nullable().describe('The median time we took to reply, over 90 days.'),
  trend: z
    .enum(['warming', 'steady', 'cooling', 'cold'])
    .describe(
      'On mails in + out + meetings: cold if none in 90 days; cooling if none in 60; warming if the last 30 days have at least 25 % more than the 30 before; cooling if at least 25 % fewer; else steady.',
    ),
});
export type RecordInsights = z.output<typeof recordInsights>;
