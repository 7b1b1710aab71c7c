import {
  type BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Client } from 'pg';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export interface ChannelHandlers {
  message(payload: string | undefined): void;
  /** LISTEN is (again) in place: whatever was announced while it was not is lost. */
  listening(): void;
  /** The connection is gone: nothing is heard until `listening` is called again. */
  lost?(): void;
}

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 10_000;
export const LISTENER_APPLICATION_NAME = 'syncline-api-listen';

/**
 * The process's one LISTEN connection: a dedicated `pg` client (a pooled one would lose its
 * LISTENs when handed back) for every channel the API hears (entity changes for the live
 * streams, API-key revocations for the key cache). A lost connection is replaced with
 * backoff; each channel's handlers hear when it is lost and when LISTEN is in place again,
 * so that what depends on hearing every message (a stream, a cache) can start over.
 */
@Injectable()
export class PgListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly channels = new Map<string, ChannelHandlers>();
  private client: Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  private active = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectPinoLogger(PgListener.name) private readonly logger: PinoLogger,
  ) {}

  /** One consumer per channel, registered before the application starts. */
  listen(channel: string, handlers: ChannelHandlers): void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    if (this.channels.has(channel)) throw new Error(`channel ${channel} already has a consumer`);
    this.channels.set(channel, handlers);
  }

  /** LISTEN is in place right now. */
  get listening(): boolean {
    return this.active;
  }

  /** The first attempt is awaited (normally listening once the app is up); a failure only schedules a retry. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.channels.size > 0) await this.connect();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.setInactive();
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.config.DATABASE_URL,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: 5_000,
      // A silently dropped connection would otherwise look like a quiet channel forever.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    client.on('notification', (message) => {
      const handlers = this.channels.get(message.channel);
      if (!handlers) return;
      try {
        handlers.message(message.payload);
      } catch (error) {
        // Thrown into pg's notification event it would be taken for a connection failure.
        this.logger.error({ err: error, channel: message.channel }, 'a notification handler failed');
      }
    });
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    // Stopped, or already lost and replaced, while connecting.
    if (this.client !== client) return;
    if (this.failures > 0) this.logger.info({ failures: this.failures }, 'notification listener is back');
    this.failures = 0;
    this.active = true;
    for (const handlers of this.channels.values()) handlers.listening();
  }

  private setInactive(): void {
    if (!this.active) return;
    this.active = false;
    for (const handlers of this.channels.values()) handlers.lost?.();
  }

  private lost(client: Client, error: unknown): void {
    // A replaced client's last words ('error' is followed by 'end') are not news.
    if (this.client !== client) return;
    this.client = undefined;
    this.setInactive();
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.failures);
    // Jitter, so that every API process does not reconnect in the same instant.
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.failures++;
    this.logger.warn(
      { err: error, failures: this.failures, retryInMs: delay },
      'notification listener lost its connection; reconnecting',
    );
    this.retry = setTimeout(() => void this.connect(), delay);
  }
}

/** The process's LISTEN connection, shared by every module that hears a channel. */
@Global()
@Module({ providers: [PgListener], exports: [PgListener] })
export class PgListenerModule {}
