import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { MicrosoftStateRef } from '../microsoft-state';

const limitsBody = z.strictObject({
  concurrent: z.number().int().positive().optional(),
  perTenMinutes: z.number().int().positive().optional(),
});

/** `POST /_emulator/microsoft/limits`: lowers (or raises) the per-mailbox limits until the next reset. */
export function registerThrottlingControlRoutes(app: FastifyInstance, state: MicrosoftStateRef): void {
  app.post('/_emulator/microsoft/limits', async (req, reply) => {
    const parsed = limitsBody.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply.code(400).send({ error: 'invalid limits', issues: parsed.error.issues });
    return state.current.throttle.configure(parsed.data);
  });

  app.get('/_emulator/microsoft/limits', async () => state.current.throttle.limits);
}
