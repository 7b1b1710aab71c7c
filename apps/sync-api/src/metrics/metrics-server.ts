import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MetricsService } from './metrics.service';

/**
 * Serves `GET /metrics` on API_METRICS_HOST:API_METRICS_PORT (0 = off), a port of its own:
 * the API's port is public, and what the metrics say (routes, volumes, the process) is not
 * for its callers. Metrics never stop the API: a port already taken is logged, and the API
 * runs on without the endpoint.
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
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? (address as AddressInfo).port : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.API_METRICS_PORT === 0) return;
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
        server.listen(this.config.API_METRICS_PORT, this.config.API_METRICS_HOST, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      this.logger.error(
        { err: error, port: this.config.API_METRICS_PORT },
        'metrics endpoint not started (API_METRICS_PORT); the API runs without it',
      );
      return;
    }
    this.server = server;
    this.logger.info({ host: this.config.API_METRICS_HOST, port: this.port }, 'metrics served at /metrics');
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
