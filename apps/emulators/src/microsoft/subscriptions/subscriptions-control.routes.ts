import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { MicrosoftStateRef } from '../microsoft-state';
import { renderSubscription } from './subscriptions.routes';

const lifecycleBody = z.strictObject({
  event: z.enum(['reauthorizationRequired', 'subscriptionRemoved', 'missed']),
});

const settingsBody = z.strictObject({
  maxExpirationMinutes: z.number().positive().optional(),
  validationTimeoutMs: z.number().int().positive().optional(),
  batchWindowMs: z.number().int().nonnegative().optional(),
  responseTimeoutMs: z.number().int().positive().optional(),
  retryBaseMs: z.number().int().positive().optional(),
  retryForMs: z.number().int().nonnegative().optional(),
});

/**
 * The subscriptions side of the Microsoft control API: every live subscription and the
 * deliveries made, lifecycle events raised as Graph would, and the limits and delivery
 * timings (short ones for tests).
 */
export function registerSubscriptionControlRoutes(app: FastifyInstance, state: MicrosoftStateRef): void {
  const base = '/_emulator/microsoft/subscriptions';

  app.get(base, async () => ({
    subscriptions: state.current.subscriptions
      .all()
      .map((s) => ({ ...renderSubscription(s), userPrincipalName: s.user.userPrincipalName })),
    deliveries: state.current.notifications.deliveries(),
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/lifecycle`, async (req, reply) => {
    const parsed = lifecycleBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid event', issues: parsed.error.issues });
    const sent = state.current.subscriptions.lifecycle(req.params.id, parsed.data.event);
    return reply.code(202).send({ sent });
  });

  app.post(`${base}/settings`, async (req, reply) => {
    const parsed = settingsBody.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply.code(400).send({ error: 'invalid settings', issues: parsed.error.issues });
    const { maxExpirationMinutes, validationTimeoutMs, ...delivery } = parsed.data;
    const { subscriptions, notifications } = state.current;
    if (maxExpirationMinutes !== undefined)
      subscriptions.settings.maxExpirationMinutes = maxExpirationMinutes;
    if (validationTimeoutMs !== undefined) subscriptions.settings.validationTimeoutMs = validationTimeoutMs;
    for (const [key, value] of Object.entries(delivery))
      if (value !== undefined) notifications.settings[key as keyof typeof delivery] = value;
    return { ...subscriptions.settings, ...notifications.settings };
  });
}
