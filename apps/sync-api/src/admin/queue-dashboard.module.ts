import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PrismaClient } from '@syncline/core/db';
import { QUEUES, type QueueName } from '@syncline/jobs';
import { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { publicOrigin } from '../auth/sessions/session-cookie';
import { SessionsModule } from '../auth/sessions/sessions.module';
import { SessionsService } from '../auth/sessions/sessions.service';
import type { ApiErrorBody, ApiErrorCode } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { CONTENT_SECURITY_POLICY } from '../web/serve-web-app';

/** Where the dashboard is served; the web app's catch-all leaves this prefix to the API. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** The workers' queues (the job map's), under REDIS_PREFIX. */
export const WORKER_QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];

/** Methods that change nothing: anything else must come from our own origin. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The BullMQ dashboard (bull-board) on the API's own Fastify instance at /admin/queues, for a
 * workspace admin: an admin session (the AuthGuard's cookie lookup) or an admin API key.
 *
 * | request | answer |
 * |---|---|
 * | no credential, or one that has ended, opening a page | 302 to `/sign-in?returnTo=<the page>` |
 * | the same calling the dashboard's API (`…/api/…`) or writing | 401 `unauthorized` |
 * | a sales member or key | 403 `forbidden` |
 * | an admin of another workspace than the operators' (QUEUE_DASHBOARD_WORKSPACE_ID, else the only one): the queues hold every workspace's jobs | 403 `forbidden` |
 * | a write (retry, clean, …) with the cookie from another `Origin` | 403 `csrf_failed` |
 *
 * Its writes cannot carry the app's X-CSRF-Token (the dashboard's own UI sends them), so a
 * cookie write must come from PUBLIC_BASE_URL's origin, which browsers state on every
 * non-GET request; the cookie is SameSite=Lax besides, so another site's form posts go without it.
 */
@Injectable()
export class QueueDashboard implements OnModuleInit, OnApplicationShutdown {
  private readonly origin: string;
  private redis: Redis | undefined;
  private queues: Queue[] = [];

  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(ApiKeysService) private readonly apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
  ) {
    this.origin = publicOrigin(config);
  }

  onModuleInit(): void {
    // BullMQ prefixes keys itself: a connection of its own, without the app's key prefix.
    const redis = new Redis(this.config.REDIS_URL, {
      connectTimeout: 2_000,
      maxRetriesPerRequest: null,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      lazyConnect: true,
    });
    redis.on('error', () => undefined);
    this.redis = redis;
    this.queues = WORKER_QUEUE_NAMES.map((name) => {
      const queue = new Queue(name, { connection: redis, prefix: this.config.REDIS_PREFIX });
      queue.on('error', () => undefined);
      return queue;
    });
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
    createBullBoard({
      queues: this.queues.map((queue) => new BullMQAdapter(queue)),
      serverAdapter,
      options: { uiConfig: { boardTitle: 'Syncline queues' } },
    });
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    void fastify.register(async (scope) => {
      scope.addHook('onRequest', (request, reply) => this.admit(request, reply));
      scope.addHook('onSend', async (_request, reply, payload) => {
        // Held to the web app's policy: its own scripts and styles only, so its Google Fonts
        // stylesheet is refused (the system fonts stand in, and no admin's address goes to a
        // third party); its one inline script is JSON data, which a CSP does not run.
        if (String(reply.getHeader('content-type') ?? '').startsWith('text/html'))
          reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
        reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin');
        return payload;
      });
      await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close().catch(() => undefined)));
    this.redis?.disconnect();
  }

  /** Lets an admin through; answers everyone else (see the table above), returning the reply sent. */
  private async admit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const role = await this.roleOf(request);
    const safe = SAFE_METHODS.has(request.method);
    if (role === null) {
      const path = request.url.split('?')[0] ?? QUEUE_DASHBOARD_PATH;
      if (safe && !path.startsWith(`${QUEUE_DASHBOARD_PATH}/api/`)) {
        const returnTo = path.startsWith(QUEUE_DASHBOARD_PATH) ? path : QUEUE_DASHBOARD_PATH;
        return reply.redirect(`/sign-in?returnTo=${encodeURIComponent(returnTo)}`, 302);
      }
      return answer(reply, 401, 'unauthorized', 'sign in as an admin, or send an admin API key');
    }
    if (role.role !== 'admin') return answer(reply, 403, 'forbidden', 'the queues are for admins');
    // Every workspace's jobs are on these queues: only the operators' workspace may look.
    if (!(await this.isOperators(role.workspaceId)))
      return answer(
        reply,
        403,
        'forbidden',
        "the queues hold every workspace's jobs: only the admins of the operators' workspace (QUEUE_DASHBOARD_WORKSPACE_ID, or the deployment's only workspace) may open them",
      );
    if (!safe && role.viaCookie && request.headers.origin !== this.origin)
      return answer(
        reply,
        403,
        'csrf_failed',
        `a write with the session cookie must come from ${this.origin}`,
      );
    return undefined;
  }

  /**
   * The operators' workspace: QUEUE_DASHBOARD_WORKSPACE_ID when set; else a deployment of one
   * workspace is its admins' own (a team running Syncline for itself), and one of several has none.
   */
  private async isOperators(workspaceId: string): Promise<boolean> {
    const operators = this.config.QUEUE_DASHBOARD_WORKSPACE_ID;
    if (operators !== undefined) return workspaceId === operators;
    const workspaces = await this.prisma.workspace.findMany({ select: { id: true }, take: 2 });
    return workspaces.length === 1 && workspaces[0]?.id === workspaceId;
  }

  private async roleOf(
    request: FastifyRequest,
  ): Promise<{ role: string; workspaceId: string; viaCookie: boolean } | null> {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const principal = await this.apiKeys.authenticate(authorization);
      return principal
        ? { role: principal.role, workspaceId: principal.workspaceId, viaCookie: false }
        : null;
    }
    if (!this.sessions.presented(request)) return null;
    const session = await this.sessions.authenticate(request);
    return session ? { role: session.role, workspaceId: session.workspaceId, viaCookie: true } : null;
  }
}

function answer(reply: FastifyReply, status: number, code: ApiErrorCode, message: string): FastifyReply {
  return reply.code(status).send({ error: { code, message } } satisfies ApiErrorBody);
}

@Module({
  imports: [SessionsModule, ApiKeysModule],
  providers: [QueueDashboard],
})
export class QueueDashboardModule {}
