import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { type SessionCookie, sessionCookie } from './session-cookie';
import { type MemberId, type SessionId, type SessionRecord, SessionsRepository } from './sessions.repository';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A session ends this long after sign-in, used or not. */
export const SESSION_ABSOLUTE_MS = 30 * DAY_MS;
/** …or this long after its last request. */
export const SESSION_IDLE_MS = 7 * DAY_MS;
/** The idle expiry is renewed by a write at most this often. */
const TOUCH_RESOLUTION_MS = 60_000;
const TOKEN_BYTES = 32;

/** A session the cookie of a request names, alive, with its member's current role. */
export type LiveSession = SessionRecord;

/**
 * Browser sessions: an opaque random id in an HttpOnly cookie, of which PostgreSQL keeps only
 * a SHA-256 hash. Every request reads the row (nothing cached): a sign-out, a removal or a
 * role change holds from the next request.
 */
@Injectable()
export class SessionsService {
  readonly cookie: SessionCookie;

  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(SessionsService.name) private readonly logger: PinoLogger,
  ) {
    this.cookie = sessionCookie(config);
  }

  /**
   * Signs the member in: a new session (the member, if invited, becomes active) and its
   * cookie on the reply. A removed member, or one not in that workspace, is a 401. A session
   * the browser already held ends: a sign-in always starts a fresh id.
   */
  async start(reply: FastifyReply, member: { workspaceId: string; memberId: string }): Promise<void> {
    if (!(await this.startIfAllowed(reply, member)))
      throw new UnauthorizedException('this member may not sign in');
  }

  /** `start`, answering false instead of throwing when the member may not sign in (removed, unknown). */
  async startIfAllowed(
    reply: FastifyReply,
    member: { workspaceId: string; memberId: string },
  ): Promise<boolean> {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const now = new Date();
    const id = await this.sessions.create(
      {
        workspaceId: member.workspaceId as WorkspaceId,
        memberId: member.memberId as MemberId,
        tokenHash: hashToken(token),
        csrfSecret: randomBytes(32).toString('base64url'),
        expiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
      },
      now,
    );
    if (id === null) return false;
    const previous = this.tokenOf(reply.request);
    if (previous !== undefined) await this.sessions.revokeByTokenHash(hashToken(previous), now);
    this.logger.info(
      { workspaceId: member.workspaceId, memberId: member.memberId, sessionId: id },
      'signed in',
    );
    reply.setCookie(this.cookie.name, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: this.cookie.secure,
      // The browser may keep it as long as the session could live; the server decides sooner.
      maxAge: SESSION_ABSOLUTE_MS / 1000,
    });
    return true;
  }

  /** The request's session, or null without a cookie or when it is unknown, expired or revoked. */
  async authenticate(request: FastifyRequest): Promise<LiveSession | null> {
    const token = this.tokenOf(request);
    if (token === undefined) return null;
    const now = new Date();
    const session = await this.sessions.findLive(
      hashToken(token),
      new Date(now.getTime() - SESSION_IDLE_MS),
      now,
    );
    if (!session) return null;
    const staleBefore = new Date(now.getTime() - TOUCH_RESOLUTION_MS);
    if (session.lastSeenAt < staleBefore) {
      await this.sessions.touch(session.workspaceId, session.id, now, staleBefore);
    }
    return session;
  }

  /** True when the request carries a session cookie at all (valid or not). */
  presented(request: FastifyRequest): boolean {
    return this.tokenOf(request) !== undefined;
  }

  /** The CSRF token of a session: an HMAC of its id under its own secret, so it is bound to it. */
  csrfToken(session: Pick<LiveSession, 'id' | 'csrfSecret'>): string {
    return createHmac('sha256', session.csrfSecret).update(`csrf:${session.id}`).digest('base64url');
  }

  /** The CSRF token of a principal's session; null when it has none (a key) or it was revoked. */
  async csrfTokenOf(principal: {
    workspaceId: WorkspaceId;
    sessionId?: SessionId | undefined;
  }): Promise<string | null> {
    if (principal.sessionId === undefined) return null;
    const secret = await this.sessions.csrfSecretOf(principal.workspaceId, principal.sessionId);
    return secret === null ? null : this.csrfToken({ id: principal.sessionId, csrfSecret: secret });
  }

  csrfTokenMatches(session: Pick<LiveSession, 'id' | 'csrfSecret'>, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const expected = Buffer.from(this.csrfToken(session));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Ends the session; the cookie is cleared when a reply is given. */
  async end(workspaceId: WorkspaceId, sessionId: SessionId, reply?: FastifyReply): Promise<void> {
    await this.sessions.revoke(workspaceId, sessionId, new Date());
    if (reply) this.clearCookie(reply);
  }

  /** Ends every session of the member at once (their removal). */
  async endAllOf(workspaceId: WorkspaceId, memberId: string): Promise<number> {
    return this.sessions.revokeAllOf(workspaceId, memberId as MemberId, new Date());
  }

  clearCookie(reply: FastifyReply): void {
    reply.clearCookie(this.cookie.name, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: this.cookie.secure,
    });
  }

  /** The session token's hash, e.g. to bind an OAuth state to the browser that started it. */
  tokenHashOf(request: FastifyRequest): string | undefined {
    const token = this.tokenOf(request);
    return token === undefined ? undefined : hashToken(token).toString('hex');
  }

  private tokenOf(request: FastifyRequest): string | undefined {
    const value = request.cookies?.[this.cookie.name];
    return value === undefined || value === '' ? undefined : value;
  }
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
