import type { Server } from 'node:http';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { boundPort, closeMetrics, serveMetrics } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MetricsService } from './metrics.service';

/**
 * Serves `GET /metrics` on API_METRICS_HOST:API_METRICS_PORT (0 = off), a port of its own:
 * the API's port is public, and what the metrics say (routes, volumes, the process) is not
 * for its callers.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;

  constructor(
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectPinoLogger(MetricsServer.name) private readonly logger: PinoLogger,
  ) {}

  /** The bound port, once listening. */
  get port(): number | undefined {
    return boundPort(this.server);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.API_METRICS_PORT === 0) return;
    this.server = await serveMetrics({
      host: this.config.API_METRICS_HOST,
      port: this.config.API_METRICS_PORT,
      setting: 'API_METRICS_PORT',
      render: () => this.metrics.render(),
      contentType: this.metrics.contentType,
      logger: this.logger,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeMetrics(server);
  }
}
