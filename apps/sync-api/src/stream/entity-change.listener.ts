import { Inject, Injectable } from '@nestjs/common';
import { ENTITY_CHANNEL, ENTITY_TYPES } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { z } from 'zod';
import { PgListener } from '../infra/pg-listener';

export { LISTENER_APPLICATION_NAME } from '../infra/pg-listener';

/** The payload the sync stage sends on ENTITY_CHANNEL (`EntityChanged` of @syncline/core), checked. */
const entityChanged = z.object({
  workspaceId: z.string().min(1),
  id: z.string().min(1),
  type: z.enum(ENTITY_TYPES),
  version: z.number().int(),
});
export type EntityChange = z.output<typeof entityChanged>;

export interface EntityChangeHandlers {
  change(change: EntityChange): void;
  /** LISTEN is (again) in place: whatever was announced while it was not is lost. */
  listening(): void;
}

/**
 * Entity changes as the sync stage announces them on ENTITY_CHANNEL, heard on the process's
 * LISTEN connection and checked before they reach the stream service.
 */
@Injectable()
export class EntityChangeListener {
  private handlers: EntityChangeHandlers | undefined;

  constructor(
    @Inject(PgListener) private readonly listener: PgListener,
    @InjectPinoLogger(EntityChangeListener.name) private readonly logger: PinoLogger,
  ) {
    listener.listen(ENTITY_CHANNEL, {
      message: (payload) => this.deliver(payload),
      listening: () => this.handlers?.listening(),
    });
  }

  /** One consumer per process: the stream service. */
  subscribe(handlers: EntityChangeHandlers): void {
    this.handlers = handlers;
  }

  /** LISTEN is in place right now. */
  get listening(): boolean {
    return this.listener.listening;
  }

  private deliver(payload: string | undefined): void {
    let parsed: z.ZodSafeParseResult<EntityChange>;
    try {
      parsed = entityChanged.safeParse(JSON.parse(payload ?? ''));
    } catch {
      parsed = entityChanged.safeParse(undefined);
    }
    if (!parsed.success) {
      this.logger.warn({ issues: parsed.error.issues }, `ignored a malformed ${ENTITY_CHANNEL} notification`);
      return;
    }
    this.handlers?.change(parsed.data);
  }
}
