import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Req,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCookieAuth,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MembersService } from '../members/members.service';
import { CurrentPrincipal, Public } from './auth.decorators';
import { MagicLinkLimiter } from './magic-links/magic-link-limiter';
import { MagicLinksService } from './magic-links/magic-links.service';
import type { Principal } from './principal';
import { publicOrigin } from './sessions/session-cookie';
import { SessionsService } from './sessions/sessions.service';
import {
  type ConsumeMagicLinkBody,
  consumeMagicLinkBody,
  type MagicLinkBody,
  magicLinkBody,
  magicLinkSentView,
  type SessionView,
  type SignedInView,
  sessionView,
  signedInView,
} from './sign-in.schemas';

/**
 * The browser's sign-in by mailed link, its session and its sign-out. (Google and other
 * OpenID providers: oidc/.)
 */
@ApiTags('auth')
@Controller('api/v1/auth')
export class SignInController {
  private readonly origin: string;

  constructor(
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(MembersService) private readonly members: MembersService,
    @Inject(MagicLinksService) private readonly links: MagicLinksService,
    @Inject(MagicLinkLimiter) private readonly limiter: MagicLinkLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.origin = publicOrigin(config);
  }

  @ApiOperation({
    summary: 'The signed-in member, their workspace and role, and the CSRF token of the session.',
  })
  @ApiCookieAuth()
  @ApiOkResponse({ standardSchema: sessionView })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Get('session')
  async session(@CurrentPrincipal() principal: Principal): Promise<SessionView> {
    // A key has no session: 401, so the app knows to show its sign-in page.
    if (principal.actor.kind !== 'member') throw new UnauthorizedException('no session: sign in');
    const [profile, csrfToken] = await Promise.all([
      this.members.profile(principal.workspaceId, principal.actor.id),
      this.sessions.csrfTokenOf(principal),
    ]);
    if (!profile || csrfToken === null)
      throw new UnauthorizedException('the session has ended; sign in again');
    return { ...profile, role: principal.role, csrfToken };
  }

  @ApiOperation({
    summary:
      'Mails a one-time sign-in link (`<PUBLIC_BASE_URL>/sign-in/link#token=…`, 15 minutes) if the address may sign in. ' +
      'The answer is the same for every address.',
  })
  @ApiAcceptedResponse({ standardSchema: magicLinkSentView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.TOO_MANY_REQUESTS)
  @Public()
  @HttpCode(HttpStatus.ACCEPTED)
  @Post('magic-link')
  async requestLink(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body({ schema: magicLinkBody }) body: MagicLinkBody,
  ): Promise<{ sent: true }> {
    this.checkOrigin(request);
    const wait = await this.limiter.take(body.email, request.ip);
    if (wait !== null) {
      reply.header('retry-after', String(wait));
      throw new CodedHttpException(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limited',
        `too many sign-in links asked for; retry in ${wait} s`,
      );
    }
    const recipient = await this.members.linkRecipient(body.email);
    if (recipient) this.links.mailSignInLink(recipient, body.returnTo);
    return { sent: true };
  }

  @ApiOperation({ summary: 'Spends a sign-in link and starts a session (the cookie).' })
  @ApiOkResponse({ standardSchema: signedInView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN)
  @Public()
  @HttpCode(HttpStatus.OK)
  @Post('magic-link/consume')
  async consume(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body({ schema: consumeMagicLinkBody }) body: ConsumeMagicLinkBody,
  ): Promise<SignedInView> {
    this.checkOrigin(request);
    const spent = await this.links.consume(body.token);
    if (!spent || !(await this.sessions.startIfAllowed(reply, spent))) {
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'link_invalid',
        'this sign-in link was used, has expired or does not exist; ask for a new one',
      );
    }
    return { returnTo: spent.returnTo };
  }

  @ApiOperation({ summary: 'Ends the session and clears its cookie (a cookie write: needs X-CSRF-Token).' })
  @ApiCookieAuth()
  @ApiNoContentResponse({ description: 'Signed out.' })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @HttpCode(HttpStatus.NO_CONTENT)
  @Post('sign-out')
  async signOut(
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    if (principal.sessionId === undefined)
      throw new UnauthorizedException('no session: an API key cannot sign out');
    await this.sessions.end(principal.workspaceId, principal.sessionId, reply);
  }

  /**
   * The public sign-in writes take no cookie, so no CSRF token; a browser's request from
   * another site is refused by its Origin (a login CSRF would sign the victim in as the attacker).
   */
  private checkOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== this.origin) {
      throw new CodedHttpException(
        HttpStatus.FORBIDDEN,
        'csrf_failed',
        `sign-in must come from ${this.origin}`,
      );
    }
  }
}
