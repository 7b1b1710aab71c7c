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

  it.each([
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
