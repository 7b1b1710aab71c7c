import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { runScript } from './testing/processes';
import { bearer, startTestApp, type TestApp } from './testing/test-app';

const CLI = 'apps/sync-api/src/cli.ts';

describe('cli create-workspace', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('cli');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a workspace, admin and key, and prints a key that authenticates', async () => {
    const run = await runScript(CLI, ['create-workspace', '--name', 'Acme Corp', '--admin-email', 'a@b.c'], {
      DATABASE_URL: t.db.url,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as { workspaceId: string; apiKey: string };
    expect(Object.keys(printed).sort()).toEqual(['apiKey', 'workspaceId']);

    const me = await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(printed.apiKey) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ workspaceId: printed.workspaceId, role: 'admin' });

    const workspace = await t.prisma.workspace.findUniqueOrThrow({
      where: { id: printed.workspaceId },
      include: { members: true, apiKeys: true },
    });
    expect(workspace.name).toBe('Acme Corp');
    expect(workspace.members).toEqual([expect.objectContaining({ email: 'a@b.c', role: 'admin' })]);
    expect(workspace.apiKeys).toEqual([
      expect.objectContaining({ role: 'admin', userId: workspace.members[0]!.id }),
    ]);
  });

  it('makes the first admin a member who signs in with a printed one-time link', async () => {
    const created = await runScript(
      CLI,
      ['create-workspace', '--name', 'Links', '--admin-email', 'Ops@Links.test', '--admin-name', 'Olga'],
      { DATABASE_URL: t.db.url },
    );
    expect(created.code, created.stderr).toBe(0);
    const { workspaceId } = JSON.parse(created.stdout) as { workspaceId: string };
    expect(await t.prisma.member.findMany({ where: { workspaceId } })).toEqual([
      expect.objectContaining({ email: 'ops@links.test', name: 'Olga', role: 'admin', status: 'active' }),
    ]);

    const env = { DATABASE_URL: t.db.url, PUBLIC_BASE_URL: 'https://sync.example.com' };
    const printed = await runScript(
      CLI,
      ['sign-in-link', '--email', 'ops@links.test', '--workspace', workspaceId],
      env,
    );
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    const url = printed.stdout.trim();
    expect(url).toMatch(/^https:\/\/sync\.example\.com\/sign-in\/link#token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(url).hash.replace('#token=', '');
    const consume = () =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/magic-link/consume', payload: { token } });
    const signedIn = await consume();
    expect(signedIn.statusCode).toBe(200);
    const cookie = signedIn.cookies[0];
    const session = await t.app.inject({
      method: 'GET',
      url: '/api/v1/auth/session',
      headers: { cookie: `${cookie?.name}=${cookie?.value}` },
    });
    expect(session.json()).toMatchObject({
      member: { email: 'ops@links.test', name: 'Olga' },
      role: 'admin',
    });
    // One time only.
    expect((await consume()).statusCode).toBe(400);

    const unknown = await runScript(CLI, ['sign-in-link', '--email', 'nobody@links.test'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('nobody@links.test is not a member');
  });

  it.each([
    [['sign-in-link'], /needs --email/],
    [['sign-in-link', '--email', 'x@y.z', '--workspace', 'acme'], /--workspace must be a workspace id/],
    [[], /no command given/],
    [['launch-rockets'], /unknown command "launch-rockets"/],
    [['create-workspace'], /needs --name/],
    [['create-workspace', '--name', '  '], /--name must not be empty/],
    [['create-workspace', '--name', 'X', '--admin-email', 'not-an-email'], /--admin-email must be an email/],
    [['create-workspace', '--name', 'X', '--colour', 'red'], /--colour/],
  ])('exits 2 with usage for %j', async (args, message) => {
    const run = await runScript(CLI, args, { DATABASE_URL: t.db.url });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('usage:');
  });

  it('exits 1 naming DATABASE_URL when it is malformed', async () => {
    const run = await runScript(CLI, ['create-workspace', '--name', 'X'], { DATABASE_URL: 'mysql://nope' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL');
  });
});

describe('cli against a database that does not answer', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sync_api_cli_gone');
    await db.drop();
  });

  it('exits 1 with the error and prints no key', async () => {
    const run = await runScript(CLI, ['create-workspace', '--name', 'X'], { DATABASE_URL: db.url });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: /);
  });
});
