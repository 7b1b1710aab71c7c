import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PrismaClient } from '@syncline/core/db';
import { CSRF_HEADER } from '../auth/auth.guard';
import { MagicLinksService } from '../auth/magic-links/magic-links.service';

export interface SignedIn {
  /** The `Cookie` header value: `<name>=<id>`. */
  cookie: string;
  csrfToken: string;
  memberId: string;
  /** Headers for a write with this session: cookie, CSRF token and the app's Origin. */
  writeHeaders: Record<string, string>;
}

/**
 * Signs in as a member of the workspace, making the member (active, with this role) if
 * needed, through the real link consume route: a link is issued as `cli sign-in-link` does.
 */
export async function signInAs(
  app: NestFastifyApplication,
  who: { workspaceId: string; email: string; role: 'admin' | 'sales'; name?: string },
): Promise<SignedIn> {
  const prisma = app.get(PrismaClient);
  const email = who.email.toLowerCase();
  const member = await prisma.member.upsert({
    where: { workspaceId_email: { workspaceId: who.workspaceId, email } },
    create: { workspaceId: who.workspaceId, email, role: who.role, name: who.name ?? null },
    update: { role: who.role, removedAt: null, ...(who.name === undefined ? {} : { name: who.name }) },
    select: { id: true },
  });
  const link = await app
    .get(MagicLinksService)
    .issue({ workspaceId: who.workspaceId, memberId: member.id, email }, '/');
  const token = new URL(link).hash.replace(/^#token=/, '');
  const consumed = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/magic-link/consume',
    payload: { token },
  });
  if (consumed.statusCode !== 200)
    throw new Error(`signing in failed: ${consumed.statusCode} ${consumed.body}`);
  const set = consumed.cookies[0];
  if (!set) throw new Error('signing in set no cookie');
  const cookie = `${set.name}=${set.value}`;
  const session = await app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie } });
  if (session.statusCode !== 200)
    throw new Error(`reading the session failed: ${session.statusCode} ${session.body}`);
  const csrfToken = session.json<{ csrfToken: string }>().csrfToken;
  const origin = new URL(link).origin;
  return {
    cookie,
    csrfToken,
    memberId: member.id,
    writeHeaders: { cookie, [CSRF_HEADER]: csrfToken, origin },
  };
}
