import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ENTITY_CHANNEL, ENTITY_TYPES } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Client } from 'pg';
import { z } from 'zod';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

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

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 10_000;
export const LISTENER_APPLICATION_NAME = 'syncline-api-stream';

/**
 * The process's one LISTEN connection on ENTITY_CHANNEL: a dedicated `pg` client (a pooled
 * one would lose the LISTEN when handed back). A lost connection is replaced with backoff,
 * and each time LISTEN is in place again the handlers hear of it, so that streams can tell
 * their clients to refetch.
 */
@Injectable()
export class EntityChangeListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private client: Client | undefined;
  private handlers: EntityChangeHandlers | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  private active = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectPinoLogger(EntityChangeListener.name) private readonly logger: PinoLogger,
  ) {}

  /** One consumer per process: the stream service. */
  subscribe(handlers: EntityChangeHandlers): void {
    this.handlers = handlers;
  }

  /** LISTEN is in place right now. */
  get listening(): boolean {
    return this.active;
  }

  /** The first attempt is awaited (normally listening once the app is up); a failure only schedules a retry. */
  async onApplicationBootstrap(): Promise<void> {
    await this.connect();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.active = false;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.config.DATABASE_URL,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: 5_000,
      // A silently dropped connection would otherwise look like a quiet workspace forever.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    client.on('notification', (message) => {
      if (message.channel === ENTITY_CHANNEL) this.deliver(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ENTITY_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    // Stopped, or already lost and replaced, while connecting.
    if (this.client !== client) return;
    if (this.failures > 0) this.logger.info({ failures: this.failures }, 'entity change listener is back');
    this.failures = 0;
    this.active = true;
    this.handlers?.listening();
  }

  private lost(client: Client, error: unknown): void {
    // A replaced client's last words ('error' is followed by 'end') are not news.
    if (this.client !== client) return;
    this.client = undefined;
    this.active = false;
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.failures);
    // Jitter, so that every API process does not reconnect in the same instant.
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.failures++;
    this.logger.warn(
      { err: error, failures: this.failures, retryInMs: delay },
      'entity change listener lost its connection; reconnecting',
    );
    this.retry = setTimeout(() => void this.connect(), delay);
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
    try {
      this.handlers?.change(parsed.data);
    } catch (error) {
      // Thrown into pg's notification event it would be taken for a connection failure.
      this.logger.error({ err: error }, 'fan-out of an entity change failed');
    }
  }
}
