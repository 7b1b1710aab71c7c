import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from './context';
import { faultSchema } from './faults';

/**
 * The control routes every port serves: reset, faults, and the request log. `resetAll`
 * forgets the state of both providers, whichever port was asked.
 */
export function registerControlRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  resetAll: () => void,
): void {
  app.post('/_emulator/reset', async (_req, reply) => {
    resetAll();
    return reply.code(204).send();
  });

  app.post('/_emulator/faults', async (req, reply) => {
    const parsed = faultSchema.safeParse(req.body);
    if (!parsed.success) {
      return reply.code(400).send({ error: 'invalid fault', issues: parsed.error.issues });
    }
    ctx.faults.add(parsed.data);
    return reply.code(201).send(parsed.data);
  });

  app.delete('/_emulator/faults', async (_req, reply) => {
    ctx.faults.clear();
    return reply.code(204).send();
  });

  app.get<{ Querystring: { service?: string; account?: string } }>('/_emulator/requests', async (req) =>
    ctx.requests.list({ service: req.query.service, account: req.query.account }),
  );
}
