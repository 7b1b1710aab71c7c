import { Controller, Get, HttpStatus, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth.decorators';
import {
  type OidcCallbackQuery,
  type OidcStartQuery,
  oidcCallbackQuery,
  oidcStartQuery,
  type SignInProvidersView,
  signInProvidersView,
} from './oidc.schemas';
import { OidcSignInService } from './oidc-sign-in.service';

const SIGN_IN_ERRORS =
  '`/sign-in?error=<code>`: `access_denied` (declined at consent), `not_a_member`, `email_unverified`, ' +
  '`domain_not_allowed` (AUTH_ALLOWED_DOMAINS), `invalid_state` (unknown, expired, used, or from another ' +
  'browser), `invalid_token` (the code exchange or the id token failed a check), `provider_unavailable`, ' +
  '`oidc_disabled`.';

/** Signing in with an OpenID Connect provider ("Sign in with Google"), and what the sign-in page offers. */
@ApiTags('auth')
@Public()
@Controller('api/v1/auth')
export class OidcController {
  constructor(@Inject(OidcSignInService) private readonly signIn: OidcSignInService) {}

  @ApiOperation({ summary: 'The ways to sign in this deployment offers, for the sign-in page.' })
  @ApiOkResponse({ description: 'What to show on the sign-in page.', standardSchema: signInProvidersView })
  @Get('providers')
  providers(): SignInProvidersView {
    return { oidc: { enabled: this.signIn.enabled, label: 'Google' }, magicLink: { enabled: true } };
  }

  @ApiOperation({
    summary:
      "Start signing in with the OpenID Connect provider: redirects to its consent page, with a short-lived cookie binding the sign-in to this browser. Open it in the browser, don't fetch it.",
  })
  @ApiResponse({
    status: HttpStatus.FOUND,
    description: `To the provider's authorize URL; or, when the provider cannot be used, ${SIGN_IN_ERRORS}`,
  })
  @Get('oidc/start')
  async start(
    @Query({ schema: oidcStartQuery }) query: OidcStartQuery,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await reply.redirect(await this.signIn.start(reply, query.returnTo), HttpStatus.FOUND);
  }

  @ApiOperation({
    summary:
      'Where the provider redirects the browser: checks the state against the cookie set at the start, exchanges the code, and signs the member in (the session cookie).',
  })
  @ApiResponse({
    status: HttpStatus.FOUND,
    description: `Signed in: to the \`returnTo\` given at the start. Refused: to ${SIGN_IN_ERRORS}`,
  })
  @Get('oidc/callback')
  async callback(
    @Query({ schema: oidcCallbackQuery }) query: OidcCallbackQuery,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await reply.redirect(await this.signIn.callback(request, query, reply), HttpStatus.FOUND);
  }
}
