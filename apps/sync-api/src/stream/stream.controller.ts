import { Controller, Get, Headers, HttpStatus, Inject, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import { responseSink, SSE_HEADERS, SSE_RETRY_MS, sseEvent } from './sse';
import { STREAM_EVENTS, type StreamQuery, streamQuery } from './stream.schemas';
import { HEARTBEAT_MS, MAX_STREAMS_PER_KEY, StreamService } from './stream.service';

const EXAMPLE = [
  `retry: ${SSE_RETRY_MS}\n\n`,
  sseEvent(41, STREAM_EVENTS.changed, {
    id: '0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f',
    type: 'person',
    version: 7,
  }),
  ': heartbeat\n\n',
  sseEvent(42, STREAM_EVENTS.refetch, { reason: 'listener_reconnected' }),
].join('');

/** Both roles may listen. */
@ApiTags('stream')
@ApiBearerAuth()
@Controller('api/v1/stream')
export class StreamController {
  constructor(@Inject(StreamService) private readonly streams: StreamService) {}

  @ApiOperation({
    summary: "Server-sent events of changes to the workspace's records",
    description:
      `\`${STREAM_EVENTS.changed}\` carries \`{ id, type, version }\` of a record as soon as the change is ` +
      `committed; read the record for its fields. \`${STREAM_EVENTS.refetch}\` (\`{ reason }\`) says changes ` +
      'may have been missed (the server lost its feed, or the request carried `Last-Event-ID`): read what ' +
      `you show again. A comment every ${HEARTBEAT_MS / 1000} s keeps the connection alive. Event ids are ` +
      `increasing per server process; there is no replay. At most ${MAX_STREAMS_PER_KEY} open streams per ` +
      'API key. The key goes in the Authorization header, as on every route (never in the query).',
  })
  @ApiOkResponse({
    description: 'An event stream that stays open.',
    content: { 'text/event-stream': { schema: { type: 'string' }, example: EXAMPLE } },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Sent by a reconnecting client: the stream then starts with a `refetch`.',
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED)
  @ApiResponse({
    status: HttpStatus.TOO_MANY_REQUESTS,
    description: `This key has ${MAX_STREAMS_PER_KEY} streams open already (\`rate_limited\`).`,
    standardSchema: apiErrorBody,
  })
  @Get()
  open(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: streamQuery }) query: StreamQuery,
    @Headers('last-event-id') lastEventId: unknown,
    @Res() reply: FastifyReply,
  ): void {
    const response = reply.raw;
    // Before the hijack, so that a refusal is still answered by the exception filter.
    const stream = this.streams.open(principal, query.types, responseSink(response));
    // From here on the response is ours: Fastify sends nothing and runs no onSend hook.
    reply.hijack();
    response.once('close', () => stream.close());
    // The client may have gone while the key was being checked; then 'close' is past.
    if (response.destroyed) {
      stream.close();
      return;
    }
    // Headers set by hooks so far (the request id) would go out with Fastify's send; with ours now.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) response.setHeader(name, value);
    response.writeHead(HttpStatus.OK, SSE_HEADERS);
    response.write(`retry: ${SSE_RETRY_MS}\n\n`);
    if (typeof lastEventId === 'string' && lastEventId !== '') stream.refetch('resumed');
  }
}
