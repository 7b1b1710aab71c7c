import { z } from 'zod';

/** The metric label of every way a webhook can end: a closed set, so the series stay bounded. */
export const WEBHOOK_OUTCOMES = [
  'appended',
  'duplicate',
  'pull_enqueued',
  'ignored',
  /** Microsoft Graph's validation handshake, answered. */
  'validated',
  'invalid_signature',
  'invalid_payload',
  'error',
] as const;
export type WebhookOutcomeLabel = (typeof WEBHOOK_OUTCOMES)[number];

export const webhookAck = z.object({
  outcome: z
    .enum(['appended', 'duplicate', 'pull_enqueued', 'ignored'])
    .describe(
      '`duplicate`: every change was already on the log (a redelivery); `ignored`: no live connection.',
    ),
  connections: z.number().int().describe('Connections the notification was for.'),
  changes: z.number().int().describe('Changes read from the notification.'),
  newChanges: z.number().int().describe('Of those, changes not already on the log.'),
});
export type WebhookAck = z.output<typeof webhookAck>;

/**
 * Microsoft Graph's validation handshake names its token in the query (already URL-decoded
 * here); notifications carry no query.
 */
export const graphWebhookQuery = z.object({
  validationToken: z
    .string()
    .min(1)
    .max(4_096)
    .optional()
    .describe("Graph's validation handshake: answered 200 with this token as text/plain."),
});
export type GraphWebhookQuery = z.output<typeof graphWebhookQuery>;
