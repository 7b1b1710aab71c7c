import { Controller, HttpCode, HttpStatus, Inject, Post, Req } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { WebhookRequest } from '@syncline/connectors';
import type { FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { type WebhookAck, webhookAck } from './webhooks.schemas';
import { WebhooksService } from './webhooks.service';

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
