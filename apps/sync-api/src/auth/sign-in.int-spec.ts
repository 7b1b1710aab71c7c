import { emulatorControl, type RunningEmulators, startEmulators } from '@syncline/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInAs } from '../testing/sign-in';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const ORIGIN = 'http://127.0.0.1:3000';

/** The mails the catch-all holds for this address, waiting a little for one to arrive. */
async function mailsTo(emulators: RunningEmulators, to: string, atLeast = 1) {
  const control = emulatorControl(emulators.hubspotUrl);
  for (let i = 0; i < 100; i++) {
    const messages = await control.mail.messages(to);
    if (messages.length >= atLeast) return messages;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return control.mail.messages(to);
}

const tokenIn = (text: string): string => {
  const match = /\/sign-in\/link#token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match?.[1]) throw new Error(`no sign-in link in ${text}`);
  return match[1];
};

describe('sign-in by magic link, sessions, CSRF and members', () => {
  let t: TestApp;
  let emulators: RunningEmulators;
  let workspaceId: string;
  let adminKey: string;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    t = await startTestApp('sign_in', {
      SMTP_URL: emulators.smtpUrl,
      PUBLIC_BASE_URL: ORIGIN,
      MAGIC_LINKS_PER_EMAIL_PER_HOUR: '2',
      MAGIC_LINKS_PER_IP_PER_HOUR: '4',
    });
    ({ workspaceId, adminKey } = await seedWorkspace(t.prisma, 'Acme'));
  });
  afterAll(async () => {
    await t?.close();
    await emulators?.close();
  });

  const get = (url: string, cookie: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  const consume = (token: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/auth/magic-link/consume', payload: { token } });
  const askLink = (email: string, returnTo?: string, remoteAddress = '127.0.0.1') =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/magic-link',
      headers: { origin: ORIGIN },
      remoteAddress,
      payload: { email, ...(returnTo === undefined ? {} : { returnTo }) },
    });

  it('answers 202 alike for a member and an unknown address, and mails only the member', async () => {
    await t.prisma.member.create({
      data: { workspaceId, email: 'ana@acme.test', name: 'Ana', role: 'sales' },
    });
    const known = await askLink('Ana@Acme.test', '/people?q=x');
    const unknown = await askLink('nobody@acme.test');
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(known.json()).toEqual({ sent: true });
    expect(unknown.body).toBe(known.body);

    const [mail] = await mailsTo(emulators, 'ana@acme.test');
    expect(mail?.text).toContain(`${ORIGIN}/sign-in/link#token=`);
    expect(await emulatorControl(emulators.hubspotUrl).mail.messages('nobody@acme.test')).toEqual([]);

    const token = tokenIn(mail?.text ?? '');
    // Only a hash of the token is kept.
    const stored = await t.prisma.magicLink.findMany({ where: { email: 'ana@acme.test' } });
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]?.tokenHash ?? []).toString('base64url')).not.toBe(token);

    const signedIn = await consume(token);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json()).toEqual({ returnTo: '/people?q=x' });
    const cookie = String(signedIn.headers['set-cookie']);
    expect(cookie).toMatch(/^syncline_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure');

    // Single use.
    const again = await consume(token);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: { code: 'link_invalid', message: expect.any(String) } });
  });

  it('refuses an expired or unknown link with the same answer', async () => {
    const member = await t.prisma.member.create({
      data: { workspaceId, email: 'exp@acme.test', role: 'sales' },
    });
    const { MagicLinksService } = await import('./magic-links/magic-links.service');
    const link = await t.app
      .get(MagicLinksService)
      .issue({ workspaceId, memberId: member.id, email: member.email }, '/');
    await t.prisma.magicLink.updateMany({
      where: { memberId: member.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await consume(new URL(link).hash.replace('#token=', ''));
    const unknown = await consume('A'.repeat(43));
    expect(expired.statusCode).toBe(400);
    expect(unknown.statusCode).toBe(400);
    expect(expired.json<{ error: { code: string } }>().error.code).toBe('link_invalid');
    expect(unknown.json<{ error: { code: string } }>().error.code).toBe('link_invalid');
  });

  it('GET /auth/session shows the member, workspace, role and a CSRF token; a key gets 401', async () => {
    const ana = await signInAs(t.app, { workspaceId, email: 'ana@acme.test', role: 'sales' });
    const res = await get('/api/v1/auth/session', ana.cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      member: { id: ana.memberId, email: 'ana@acme.test', name: 'Ana' },
      workspace: { id: workspaceId, name: 'Acme' },
      role: 'sales',
      csrfToken: ana.csrfToken,
    });
    const me = await get('/api/v1/me', ana.cookie);
    expect(me.json()).toEqual({
      workspaceId,
      role: 'sales',
      actor: { kind: 'member', id: ana.memberId },
      apiKeyId: null,
    });
    const withKey = await t.app.inject({
      method: 'GET',
      url: '/api/v1/auth/session',
      headers: bearer(adminKey),
    });
    expect(withKey.statusCode).toBe(401);
  });

  it('a cookie write needs the session’s CSRF token and the app’s Origin; a key needs neither', async () => {
    const admin = await signInAs(t.app, { workspaceId, email: 'boss@acme.test', role: 'admin' });
    const post = (headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers,
        payload: { name: 'ci', role: 'sales' },
      });

    const noToken = await post({ cookie: admin.cookie, origin: ORIGIN });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json<{ error: { code: string } }>().error.code).toBe('csrf_failed');

    const wrongOrigin = await post({ ...admin.writeHeaders, origin: 'https://evil.example' });
    expect(wrongOrigin.statusCode).toBe(403);
    expect(wrongOrigin.json<{ error: { code: string } }>().error.code).toBe('csrf_failed');

    const noOrigin = await post({ cookie: admin.cookie, 'x-csrf-token': admin.csrfToken });
    expect(noOrigin.statusCode).toBe(403);

    // Another session's token is not this one's.
    const other = await signInAs(t.app, { workspaceId, email: 'boss@acme.test', role: 'admin' });
    const foreignToken = await post({ ...admin.writeHeaders, 'x-csrf-token': other.csrfToken });
    expect(foreignToken.statusCode).toBe(403);

    const ok = await post(admin.writeHeaders);
    expect(ok.statusCode).toBe(201);
    expect(await post(bearer(adminKey))).toMatchObject({ statusCode: 201 });

    // Still JSON only: a form body is refused before anything else.
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...admin.writeHeaders, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=ci&role=sales',
    });
    expect(form.statusCode).toBe(415);
  });

  it('a salesperson’s session is refused admin routes; a role change holds from the next request', async () => {
    const admin = await signInAs(t.app, { workspaceId, email: 'boss@acme.test', role: 'admin' });
    const rep = await signInAs(t.app, { workspaceId, email: 'rep@acme.test', role: 'sales' });
    expect((await get('/api/v1/dead-letters', rep.cookie)).statusCode).toBe(403);
    const createKey = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: rep.writeHeaders,
      payload: { name: 'mine', role: 'admin' },
    });
    expect(createKey.statusCode).toBe(403);
    // Salespeople read the members' names (owners).
    expect((await get('/api/v1/members', rep.cookie)).statusCode).toBe(200);

    const promote = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/members/${rep.memberId}`,
      headers: admin.writeHeaders,
      payload: { role: 'admin' },
    });
    expect(promote.statusCode).toBe(200);
    expect(promote.json()).toMatchObject({ id: rep.memberId, role: 'admin', status: 'active' });
    expect((await get('/api/v1/dead-letters', rep.cookie)).statusCode).toBe(200);

    const demote = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/members/${rep.memberId}`,
      headers: admin.writeHeaders,
      payload: { role: 'sales' },
    });
    expect(demote.statusCode).toBe(200);
    expect((await get('/api/v1/dead-letters', rep.cookie)).statusCode).toBe(403);
  });

  it('removing a member ends their sessions at once; the last admin cannot be demoted or removed', async () => {
    const { workspaceId: ws, adminKey: soloKey } = await seedWorkspace(t.prisma, 'Solo');
    // The seeded admin member is active; sign in as them.
    const seeded = await t.prisma.member.findFirstOrThrow({ where: { workspaceId: ws } });
    const admin = await signInAs(t.app, { workspaceId: ws, email: seeded.email, role: 'admin' });
    const rep = await signInAs(t.app, { workspaceId: ws, email: 'gone@solo.test', role: 'sales' });
    expect((await get('/api/v1/me', rep.cookie)).statusCode).toBe(200);

    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/members/${rep.memberId}`,
      headers: admin.writeHeaders,
    });
    expect(removed.statusCode).toBe(204);
    expect((await get('/api/v1/me', rep.cookie)).statusCode).toBe(401);
    const sessions = await t.prisma.userSession.findMany({ where: { memberId: rep.memberId } });
    expect(sessions.every((s) => s.revokedAt !== null)).toBe(true);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: bearer(soloKey) });
    expect(audit.json<{ data: unknown[] }>().data).toEqual([
      expect.objectContaining({
        action: 'member.removed',
        targetType: 'member',
        targetId: rep.memberId,
        actor: expect.objectContaining({ kind: 'member', id: admin.memberId }),
        details: { email: 'gone@solo.test' },
      }),
    ]);
    const listed = await get('/api/v1/members', admin.cookie);
    expect(listed.json<{ data: { id: string }[] }>().data.map((m) => m.id)).toEqual([admin.memberId]);

    for (const [method, payload] of [
      ['PATCH', { role: 'sales' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: `/api/v1/members/${admin.memberId}`,
        headers: admin.writeHeaders,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(409);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('last_admin');
    }
  });

  it('a session lapses after 7 idle days and 30 in all, and is renewed on use at most once a minute', async () => {
    const ana = await signInAs(t.app, { workspaceId, email: 'ana@acme.test', role: 'sales' });
    const session = async () =>
      t.prisma.userSession.findFirstOrThrow({
        where: { memberId: ana.memberId },
        orderBy: { createdAt: 'desc' },
      });
    const first = await session();
    expect(first.expiresAt.getTime() - first.createdAt.getTime()).toBe(30 * 24 * 3600 * 1000);

    // Seen 6 days ago: still alive, and renewed.
    const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600 * 1000);
    await t.prisma.userSession.update({ where: { id: first.id }, data: { lastSeenAt: sixDaysAgo } });
    expect((await get('/api/v1/me', ana.cookie)).statusCode).toBe(200);
    const renewed = await session();
    expect(renewed.lastSeenAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Within the minute: no write.
    expect((await get('/api/v1/me', ana.cookie)).statusCode).toBe(200);
    expect((await session()).lastSeenAt).toEqual(renewed.lastSeenAt);

    await t.prisma.userSession.update({
      where: { id: first.id },
      data: { lastSeenAt: new Date(Date.now() - 7 * 24 * 3600 * 1000 - 1000) },
    });
    const idle = await get('/api/v1/me', ana.cookie);
    expect(idle.statusCode).toBe(401);
    expect(String(idle.headers['set-cookie'])).toMatch(/^syncline_session=;/);

    const bob = await signInAs(t.app, { workspaceId, email: 'ana@acme.test', role: 'sales' });
    await t.prisma.userSession.updateMany({
      where: { memberId: ana.memberId, revokedAt: null, lastSeenAt: { gt: new Date(Date.now() - 60_000) } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await get('/api/v1/me', bob.cookie)).statusCode).toBe(401);
  });

  it('signing in again in the same browser ends the session it held', async () => {
    const ana = await signInAs(t.app, { workspaceId, email: 'ana@acme.test', role: 'sales' });
    const member = await t.prisma.member.findFirstOrThrow({ where: { workspaceId, email: 'ana@acme.test' } });
    const { MagicLinksService } = await import('./magic-links/magic-links.service');
    const link = await t.app
      .get(MagicLinksService)
      .issue({ workspaceId, memberId: member.id, email: member.email }, '/');
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/magic-link/consume',
      headers: { cookie: ana.cookie },
      payload: { token: new URL(link).hash.replace('#token=', '') },
    });
    expect(again.statusCode).toBe(200);
    const fresh = again.cookies[0];
    expect(`${fresh?.name}=${fresh?.value}`).not.toBe(ana.cookie);
    expect((await get('/api/v1/me', ana.cookie)).statusCode).toBe(401);
    expect((await get('/api/v1/me', `${fresh?.name}=${fresh?.value}`)).statusCode).toBe(200);
  });

  it('sign-out needs the CSRF token, revokes the session and clears the cookie', async () => {
    const ana = await signInAs(t.app, { workspaceId, email: 'ana@acme.test', role: 'sales' });
    const noToken = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/sign-out',
      headers: { cookie: ana.cookie, origin: ORIGIN },
    });
    expect(noToken.statusCode).toBe(403);
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/sign-out',
      headers: ana.writeHeaders,
    });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(
      /^syncline_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/,
    );
    expect((await get('/api/v1/me', ana.cookie)).statusCode).toBe(401);
  });

  it('an invitation is mailed with a link; its first sign-in makes the member active', async () => {
    const admin = await signInAs(t.app, { workspaceId, email: 'boss@acme.test', role: 'admin', name: 'Bo' });
    const invited = await t.app.inject({
      method: 'POST',
      url: '/api/v1/members',
      headers: admin.writeHeaders,
      payload: { email: 'New@Acme.test', name: 'Nia', role: 'sales' },
    });
    expect(invited.statusCode).toBe(201);
    expect(invited.json()).toMatchObject({
      email: 'new@acme.test',
      name: 'Nia',
      status: 'invited',
      lastSignInAt: null,
    });
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/members',
      headers: admin.writeHeaders,
      payload: { email: 'new@acme.test', role: 'admin' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('member_exists');

    const [mail] = await mailsTo(emulators, 'new@acme.test');
    expect(mail?.subject).toContain('Acme');
    expect(mail?.text).toContain('Bo invited you');
    const signedIn = await consume(tokenIn(mail?.text ?? ''));
    expect(signedIn.statusCode).toBe(200);
    const members = await get('/api/v1/members', admin.cookie);
    expect(members.json<{ data: { email: string; status: string }[] }>().data).toContainEqual(
      expect.objectContaining({ email: 'new@acme.test', status: 'active', lastSignInAt: expect.any(String) }),
    );
  });

  it('limits link requests per address and per client address, members or not', async () => {
    for (let i = 0; i < 2; i++)
      expect((await askLink('many@acme.test', '/', '10.0.0.1')).statusCode).toBe(202);
    const third = await askLink('many@acme.test', '/', '10.0.0.2');
    expect(third.statusCode).toBe(429);
    expect(third.json<{ error: { code: string } }>().error.code).toBe('rate_limited');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);

    for (let i = 0; i < 2; i++)
      expect((await askLink(`ip${i}@acme.test`, '/', '10.0.0.3')).statusCode).toBe(202);
    // 10.0.0.1 has two left, 10.0.0.3 two: past 4 from one address, refused whoever is asked for.
    for (let i = 2; i < 4; i++)
      expect((await askLink(`ip${i}@acme.test`, '/', '10.0.0.3')).statusCode).toBe(202);
    expect((await askLink('ip9@acme.test', '/', '10.0.0.3')).statusCode).toBe(429);
    expect((await askLink('ip9@acme.test', '/', '10.0.0.4')).statusCode).toBe(202);
  });

  it('picks the workspace an address signs into: the one signed into last, else the oldest; an invitation is accepted', async () => {
    const { MembersService } = await import('../members/members.service');
    const members = t.app.get(MembersService);
    const { workspaceId: older } = await seedWorkspace(t.prisma, 'Older');
    const { workspaceId: newer } = await seedWorkspace(t.prisma, 'Newer');
    const inOlder = await t.prisma.member.create({
      data: { workspaceId: older, email: 'two@ws.test', role: 'sales' },
    });
    const inNewer = await t.prisma.member.create({
      data: { workspaceId: newer, email: 'two@ws.test', role: 'sales' },
    });
    expect(await members.signInCandidate('Two@WS.test')).toEqual({
      workspaceId: older,
      memberId: inOlder.id,
    });
    await signInAs(t.app, { workspaceId: newer, email: 'two@ws.test', role: 'sales' });
    expect(await members.signInCandidate('two@ws.test')).toEqual({
      workspaceId: newer,
      memberId: inNewer.id,
    });

    const invited = await t.prisma.member.create({
      data: { workspaceId: older, email: 'invitee@ws.test', role: 'sales', status: 'invited' },
    });
    expect(await members.signInCandidate('invitee@ws.test')).toEqual({
      workspaceId: older,
      memberId: invited.id,
    });
    expect((await t.prisma.member.findUniqueOrThrow({ where: { id: invited.id } })).status).toBe('active');
    expect(await members.signInCandidate('stranger@ws.test')).toBeNull();
    await t.prisma.member.update({ where: { id: inNewer.id }, data: { removedAt: new Date() } });
    expect(await members.signInCandidate('two@ws.test')).toEqual({
      workspaceId: older,
      memberId: inOlder.id,
    });
  });

  it('refuses a link request or consume from another origin', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/magic-link',
      headers: { origin: 'https://evil.example' },
      payload: { email: 'ana@acme.test' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('csrf_failed');
  });
});

describe('the session cookie under an https PUBLIC_BASE_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sign_in_https', { PUBLIC_BASE_URL: 'https://sync.example.com' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is __Host- prefixed and Secure, and a cookie write must come from that origin', async () => {
    const { workspaceId } = await seedWorkspace(t.prisma, 'Secure');
    const ana = await signInAs(t.app, { workspaceId, email: 'ana@secure.test', role: 'admin' });
    expect(ana.cookie).toMatch(/^__Host-syncline_session=/);
    expect(ana.writeHeaders.origin).toBe('https://sync.example.com');
    const consumedCookie = await t.prisma.userSession.count({ where: { workspaceId } });
    expect(consumedCookie).toBe(1);

    const { MagicLinksService } = await import('./magic-links/magic-links.service');
    const member = await t.prisma.member.findFirstOrThrow({
      where: { workspaceId, email: 'ana@secure.test' },
    });
    const link = await t.app
      .get(MagicLinksService)
      .issue({ workspaceId, memberId: member.id, email: member.email }, '/');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/magic-link/consume',
      payload: { token: new URL(link).hash.replace('#token=', '') },
    });
    const set = String(res.headers['set-cookie']);
    expect(set).toMatch(/^__Host-syncline_session=/);
    expect(set).toContain('Secure');
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Lax');
    expect(set).toContain('Path=/');

    const http = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...ana.writeHeaders, origin: 'http://sync.example.com' },
      payload: { name: 'x', role: 'sales' },
    });
    expect(http.statusCode).toBe(403);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys',
          headers: ana.writeHeaders,
          payload: { name: 'x', role: 'sales' },
        })
      ).statusCode,
    ).toBe(201);
  });
});
