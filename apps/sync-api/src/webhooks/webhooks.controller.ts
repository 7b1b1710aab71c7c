import {
  applyDecorators,
  Controller,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiAcceptedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WebhookRequest } from '@syncline/connectors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { type GraphWebhookQuery, graphWebhookQuery, type WebhookAck, webhookAck } from './webhooks.schemas';
import { type MicrosoftProvider, WebhooksService } from './webhooks.service';

/** What the Microsoft routes share in the OpenAPI document: the handshake's answer, and the ack. */
const GraphWebhook = (product: string) =>
  applyDecorators(
    ApiOperation({
      summary:
        `${product}: Microsoft Graph change and lifecycle notifications (authenticated by each ` +
        "subscription's clientState), and Graph's validation handshake (`?validationToken=`).",
    }),
    ApiOkResponse({
      description: 'The validation handshake: the token, URL-decoded, as text/plain. Nothing else is done.',
      content: { 'text/plain': { schema: { type: 'string' } } },
    }),
    ApiAcceptedResponse({
      description:
        'A pull of each connection named is queued; a lifecycle notification also makes its subscription due for renewal.',
      standardSchema: webhookAck,
    }),
    HttpCode(HttpStatus.ACCEPTED),
  );

/** Provider callbacks: no API key, each is authenticated by its signature or token instead. */
@ApiTags('webhooks')
@ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED)
@Public()
@Controller('webhooks')
export class WebhooksController {
  constructor(
    @Inject(WebhooksService) private readonly webhooks: WebhooksService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @ApiOperation({ summary: 'HubSpot app webhooks (v3 signature over PUBLIC_BASE_URL + path).' })
  @ApiHeader({ name: 'X-HubSpot-Signature-v3', required: true })
  @ApiHeader({ name: 'X-HubSpot-Request-Timestamp', required: true })
  @ApiOkResponse({ description: 'The changes are on the log.', standardSchema: webhookAck })
  @HttpCode(HttpStatus.OK)
  @Post('hubspot')
  hubspot(@Req() request: FastifyRequest): Promise<WebhookAck> {
    return this.webhooks.hubspot(this.webhookRequest(request));
  }

  @ApiOperation({ summary: 'Google Calendar watch-channel notifications.' })
  @ApiHeader({ name: 'X-Goog-Channel-ID', required: true })
  @ApiHeader({ name: 'X-Goog-Channel-Token', required: true })
  @ApiHeader({ name: 'X-Goog-Resource-State', required: true })
  @ApiOkResponse({ description: 'A pull of the connection is queued.', standardSchema: webhookAck })
  @HttpCode(HttpStatus.OK)
  @Post('google-calendar')
  googleCalendar(@Req() request: FastifyRequest): Promise<WebhookAck> {
    return this.webhooks.googleCalendar(this.webhookRequest(request));
  }

  @ApiOperation({ summary: 'Gmail Pub/Sub pushes (Authorization: Bearer GMAIL_PUSH_TOKEN, or ?token=).' })
  @ApiOkResponse({ description: 'A pull of the mailbox is queued.', standardSchema: webhookAck })
  @HttpCode(HttpStatus.OK)
  @Post('gmail')
  gmail(@Req() request: FastifyRequest): Promise<WebhookAck> {
    return this.webhooks.gmail(this.webhookRequest(request));
  }

  @GraphWebhook('Outlook Calendar')
  @Post('microsoft-calendar')
  microsoftCalendar(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query({ schema: graphWebhookQuery }) query: GraphWebhookQuery,
  ): Promise<void> {
    return this.microsoft('microsoft-calendar', request, reply, query);
  }

  @GraphWebhook('Outlook Mail')
  @Post('microsoft-mail')
  microsoftMail(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query({ schema: graphWebhookQuery }) query: GraphWebhookQuery,
  ): Promise<void> {
    return this.microsoft('microsoft-mail', request, reply, query);
  }

  @GraphWebhook('Microsoft To Do')
  @Post('microsoft-todo')
  microsoftTodo(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query({ schema: graphWebhookQuery }) query: GraphWebhookQuery,
  ): Promise<void> {
    return this.microsoft('microsoft-todo', request, reply, query);
  }

  /**
   * Graph's validation handshake (before it creates a subscription, for its notification and
   * lifecycle URLs alike) is answered at once with the token, URL-decoded, as text/plain;
   * anything else is a notification, acknowledged with 202 once its pulls are queued (Graph
   * wants a 2xx within 3 s).
   */
  private async microsoft(
    provider: MicrosoftProvider,
    request: FastifyRequest,
    reply: FastifyReply,
    query: GraphWebhookQuery,
  ): Promise<void> {
    if (query.validationToken !== undefined) {
      this.webhooks.graphValidation(provider);
      await reply
        .status(HttpStatus.OK)
        .header('x-content-type-options', 'nosniff')
        .type('text/plain; charset=utf-8')
        .send(query.validationToken);
      return;
    }
    const ack = await this.webhooks.microsoft(provider, this.webhookRequest(request));
    await reply.status(HttpStatus.ACCEPTED).send(ack);
  }

  /** The request as the provider made it: the public URL it called (HubSpot signs it) and the raw body. */
  private webhookRequest(request: FastifyRequest): WebhookRequest {
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    return {
      method: request.method,
      url: `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${request.url}`,
      headers,
      rawBody: request.rawBody ?? '',
      receivedAt: new Date(),
    };
  }
}
