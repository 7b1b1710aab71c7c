import fastifyCookie from '@fastify/cookie';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { AppModule, type AppOptions } from './app.module';
import { answerClientError } from './common/client-error';
import type { AppConfig } from './config/app-config';
import { echoRequestId, requestId } from './infra/request-id';
import { setupOpenApi } from './openapi/openapi';
import { serveWebApp } from './web/serve-web-app';
import { useWebhookAwareJsonParser } from './webhooks/raw-body';

/**
 * Builds and initialises the API without listening, so that main.ts can listen on
 * HOST:PORT and tests can use `app.inject()` or listen on port 0.
 */
export async function createApp(
  config: AppConfig,
  options: AppOptions = {},
): Promise<NestFastifyApplication> {
  // On close, idle keep-alive sockets are dropped at once (a client's spare connection would
  // otherwise hold shutdown for the headers timeout); open streams are ended by their service.
  const adapter = new FastifyAdapter({
    genReqId: requestId,
    requestIdHeader: false,
    forceCloseConnections: 'idle',
    // The client's address (request.ip), as the failed-authentication limit counts it.
    trustProxy: config.TRUST_PROXY,
    // A URL the router cannot read (a broken percent-escape) fails before Nest sees the
    // request: answered here in the API's error shape.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const status = error.statusCode ?? 400;
      void reply
        .code(status)
        .send({ error: { code: status === 414 ? 'uri_too_long' : 'bad_request', message: error.message } });
    },
    // A request Node's HTTP parser refuses (URL and headers too large, a malformed request) never
    // reaches the router either.
    clientErrorHandler: answerClientError,
  });
  echoRequestId(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, options), adapter, {
    bufferLogs: true,
    // Throw instead of exiting the process, so the caller decides.
    abortOnError: false,
    // No body parsers of Nest's: the only one is JSON's (useWebhookAwareJsonParser, below). Its
    // form parser fed JSON routes an object no route asked for; a form body is now a 415.
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  // Reads the session cookie (request.cookies) and sets it (reply.setCookie); unsigned: the
  // cookie is an opaque random id, checked against its hash in PostgreSQL.
  await app.register(fastifyCookie);
  useWebhookAwareJsonParser(app);
  setupOpenApi(app);
  await serveWebApp(app, config);
  await app.init();
  return app;
}
