import { Body, Controller, Get, HttpStatus, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, Public, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import { connectionListView } from './connections.schemas';
import {
  type OAuthCallbackQuery,
  type OAuthProvider,
  oauthCallbackQuery,
  oauthProviderParam,
  type StartOAuthBody,
  type StartOAuthView,
  startOAuthBody,
  startOAuthView,
} from './oauth.schemas';
import { OAuthService } from './oauth.service';

@ApiTags('connections')
@Controller('api/v1/connections/oauth')
export class OAuthController {
  constructor(@Inject(OAuthService) private readonly oauth: OAuthService) {}

  @ApiOperation({
    summary:
      "Start connecting through the provider's consent page (hubspot, or google or microsoft for several products).",
  })
  @ApiBearerAuth()
  @ApiCookieAuth()
  @ApiCreatedResponse({
    description:
      'Send the account owner to `authorizeUrl`; the provider then redirects to the callback. Started with a session cookie, the state is bound to that session: the callback must come from the same browser session.',
    standardSchema: startOAuthView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN)
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: "The provider's OAuth client is not configured, or the state store is unreachable.",
    standardSchema: apiErrorBody,
  })
  // HubSpot needs no body at all.
  @ApiBody({ required: false })
  @Roles('admin')
  @Post(':provider/start')
  start(
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Param('provider', { schema: oauthProviderParam }) provider: OAuthProvider,
    @Body({ schema: startOAuthBody }) body: StartOAuthBody,
  ): Promise<StartOAuthView> {
    return this.oauth.start(principal, request, provider, body);
  }

  @ApiOperation({
    summary:
      'Where the provider redirects the browser after consent. No API key: the state authorises it (with the session cookie, when started from one).',
  })
  @ApiOkResponse({
    description:
      'The connections made (or re-authorised); credentials sealed, never returned. Only for a connect started ' +
      'without `returnTo` (a script); refusals then answer as below.',
    standardSchema: connectionListView,
  })
  @ApiResponse({
    status: HttpStatus.SEE_OTHER,
    description:
      'A connect started with `returnTo` (from the web app): to that path with `connected=<comma-separated ' +
      'connection ids>` added to its query, or `oauthError=<code>` (one of the codes below: ' +
      '`oauth_state_invalid`, `oauth_consent_denied`, `oauth_failed`, `forbidden`, `connection_disconnected`, ' +
      '`unavailable`, …) for any refusal once the state is known. An unknown, used or expired state names no ' +
      '`returnTo`: with a session cookie (a signed-in browser) it goes to `/admin/connections?oauthError=oauth_state_invalid`, ' +
      'without one it answers 400 `oauth_state_invalid` as JSON.',
    headers: {
      Location: { description: 'The `returnTo` path with the outcome.', schema: { type: 'string' } },
    },
  })
  @ApiResponse({
    status: HttpStatus.BAD_REQUEST,
    description:
      '`oauth_state_invalid`: the state is unknown, expired, used or for another provider, or was started in a browser session the callback does not carry (or that has ended); ' +
      '`oauth_failed`: the provider refused the code or ended with an error; `validation_failed`.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.FORBIDDEN,
    description:
      '`oauth_consent_denied`: the user denied consent (or left out access a product needs); ' +
      '`forbidden`: the key that started the connect was revoked, or the member who did is no longer an admin.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description: '`connection_disconnected`: the workspace disconnected that account, for good.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: 'The provider or the state store could not be reached; start the connect again.',
    standardSchema: apiErrorBody,
  })
  @Public()
  @Get(':provider/callback')
  async callback(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('provider', { schema: oauthProviderParam }) provider: OAuthProvider,
    @Query({ schema: oauthCallbackQuery }) query: OAuthCallbackQuery,
  ): Promise<void> {
    const outcome = await this.oauth.callback(request, provider, query);
    if ('location' in outcome) await reply.redirect(outcome.location, HttpStatus.SEE_OTHER);
    else await reply.status(HttpStatus.OK).send({ data: outcome.data });
  }
}
