import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Prometheus metrics of this app. A registry per app instance (not prom-client's global
 * one) so that several apps in one process, as in tests, do not collide.
 */
@Injectable()
export class MetricsService implements OnModuleInit {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({
    name: 'syncline_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly webhooks = new Counter({
    name: 'syncline_webhooks_total',
    help: 'Webhooks and push notifications received, by provider and outcome.',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {
    collectDefaultMetrics({ register: this.registry });
  }

  onModuleInit(): void {
    // A Fastify hook rather than a Nest interceptor: it also sees requests that a guard
    // rejected or that matched no route.
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', async (request, reply) => {
      // The route pattern, never the raw URL, keeps the label set bounded.
      const route = request.routeOptions.url ?? 'unmatched';
      this.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    });
  }

  /** One webhook answered; `outcome` is one of a closed set (see WebhookOutcomeLabel). */
  webhookReceived(provider: string, outcome: string): void {
    this.webhooks.inc({ provider, outcome });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
