import type { Server } from 'node:http';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { boundPort, closeMetrics, type Logger, serveMetrics } from '@syncline/core';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { ROOT_LOGGER } from '../infra/connections';
import { WorkerMetrics } from './worker-metrics';

/** Serves `GET /metrics` on METRICS_HOST:METRICS_PORT (0 = off). */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;
  private readonly logger: Logger;

  constructor(
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: MetricsServer.name });
  }

  /** The bound port, once listening. */
  get port(): number | undefined {
    return boundPort(this.server);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.METRICS_PORT === 0) return;
    this.server = await serveMetrics({
      host: this.config.METRICS_HOST,
      port: this.config.METRICS_PORT,
      setting: 'METRICS_PORT',
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
