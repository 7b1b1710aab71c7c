import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { ROOT_LOGGER } from '../infra/connections';
import { WorkerMetrics } from './worker-metrics';

/**
 * Serves `GET /metrics` on METRICS_HOST:METRICS_PORT (0 = off). Metrics never stop the
 * workers: a port already taken is logged, and the workers run on without the endpoint.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private server: Server | undefined;

  constructor(
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: MetricsServer.name });
  }

  /** The bound port, once listening. */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? (address as AddressInfo).port : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.METRICS_PORT === 0) return;
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method !== 'GET' || path !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      this.metrics.render().then(
        (body) => response.writeHead(200, { 'content-type': this.metrics.contentType }).end(body),
        (error: unknown) => {
          this.logger.error({ err: error }, 'metrics: render failed');
          response.writeHead(500).end();
        },
      );
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.config.METRICS_PORT, this.config.METRICS_HOST, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      this.logger.error(
        { err: error, port: this.config.METRICS_PORT },
        'metrics endpoint not started (METRICS_PORT); the workers run without it',
      );
      return;
    }
    this.server = server;
    this.logger.info({ host: this.config.METRICS_HOST, port: this.port }, 'metrics served at /metrics');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
