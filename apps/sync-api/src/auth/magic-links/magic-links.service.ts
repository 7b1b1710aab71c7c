import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Mailer, MailModule } from '../../mail/mailer';
import { safeReturnTo } from '../oidc/return-to';
import { hashToken } from '../sessions/sessions.service';
import { MagicLinksRepository, type SpentMagicLink } from './magic-links.repository';

/** How long a mailed or printed link signs in. */
export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000;
const TOKEN_BYTES = 32;

export interface LinkRecipient {
  workspaceId: WorkspaceId | string;
  memberId: string;
  email: string;
}

/**
 * One-time sign-in links: a random token in the URL's fragment (never sent to a server by
 * the browser, so it stays out of logs and Referer headers; the page POSTs it), of which
 * PostgreSQL keeps only a SHA-256 hash. Valid 15 minutes, spent by its first use.
 */
@Injectable()
export class MagicLinksService implements OnModuleDestroy {
  private readonly baseUrl: string;
  /** Mails on their way, finished before the app closes. */
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly links: MagicLinksRepository,
    private readonly mailer: Mailer,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(MagicLinksService.name) private readonly logger: PinoLogger,
  ) {
    this.baseUrl = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  }

  /** A new link for the member: `<PUBLIC_BASE_URL>/sign-in/link#token=…`. */
  issue(recipient: LinkRecipient, returnTo: string | undefined): Promise<string> {
    return issueMagicLink(this.links, this.baseUrl, recipient, returnTo);
  }

  /**
   * Issues and mails a link in the background: the caller answers at once, in the same time
   * whether or not an address may sign in.
   */
  mailSignInLink(recipient: LinkRecipient, returnTo: string | undefined): void {
    this.inBackground(async () => {
      const url = await this.issue(recipient, returnTo);
      await this.mailer.send({
        to: recipient.email,
        subject: 'Your Syncline sign-in link',
        text: `Sign in to Syncline:\n\n${url}\n\nThe link works once, within 15 minutes. If you did not ask for it, ignore this mail.\n`,
      });
    });
  }

  /** An invitation, with a link that signs the invited member in. Awaited: an admin asked. */
  async mailInvitation(
    recipient: LinkRecipient,
    invitedBy: string | null,
    workspaceName: string,
  ): Promise<boolean> {
    const url = await this.issue(recipient, '/');
    return this.mailer.send({
      to: recipient.email,
      subject: `You are invited to ${workspaceName} on Syncline`,
      text:
        `${invitedBy ?? 'An admin'} invited you to ${workspaceName} on Syncline.\n\n` +
        `Sign in:\n\n${url}\n\nThe link works once, within 15 minutes; after that, ask for a new one at ${this.baseUrl}/sign-in with this address.\n`,
    });
  }

  /** Spends the token; null when it was used, expired or never issued. */
  async consume(token: string): Promise<SpentMagicLink | null> {
    return this.links.spend(hashToken(token), new Date());
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.sending]);
  }

  private inBackground(work: () => Promise<void>): void {
    const running = work()
      .catch((error: unknown) => this.logger.error({ err: error }, 'sign-in link not sent'))
      .finally(() => this.sending.delete(running));
    this.sending.add(running);
  }
}

/** Stores a new link's hash and answers its URL; the CLI's `sign-in-link` calls it too. */
export async function issueMagicLink(
  links: MagicLinksRepository,
  publicBaseUrl: string,
  recipient: LinkRecipient,
  returnTo: string | undefined,
): Promise<string> {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  await links.create({
    tokenHash: hashToken(token),
    workspaceId: recipient.workspaceId as WorkspaceId,
    memberId: recipient.memberId,
    email: recipient.email,
    returnTo: safeReturnTo(returnTo),
    expiresAt: new Date(Date.now() + MAGIC_LINK_TTL_MS),
  });
  return `${publicBaseUrl.replace(/\/+$/, '')}/sign-in/link#token=${token}`;
}

@Module({
  imports: [MailModule],
  providers: [MagicLinksService, MagicLinksRepository],
  exports: [MagicLinksService],
})
export class MagicLinksModule {}
