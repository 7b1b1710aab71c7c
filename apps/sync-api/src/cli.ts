import { parseArgs } from 'node:util';
import { ConfigError, type WorkspaceId } from '@syncline/core';
import { createPrismaClient } from '@syncline/core/db';
import { z } from 'zod';
import { MagicLinksRepository } from './auth/magic-links/magic-links.repository';
import { issueMagicLink } from './auth/magic-links/magic-links.service';
import { loadCliConfig } from './config/app-config';
import { MembersRepository } from './members/members.repository';
import { WorkspacesRepository } from './workspaces/workspaces.repository';
import { WorkspacesService } from './workspaces/workspaces.service';

const USAGE = `usage:
  cli create-workspace --name <name> [--admin-email <email>] [--admin-name <name>]
      Creates a workspace, its first admin member (who signs in with that address)
      and an admin API key, and prints {"workspaceId", "apiKey"} as JSON. The key is
      shown this once.
  cli sign-in-link --email <email> [--workspace <id>]
      Prints a one-time sign-in link for that member (15 minutes; nothing is mailed),
      for a demo or when mail is down. Without --workspace: the workspace the address
      signed into last, else its oldest.

settings: DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/syncline),
          PUBLIC_BASE_URL (the links' base, default http://127.0.0.1:3000)`;

const DEFAULT_ADMIN_EMAIL = 'admin@localhost';

class UsageError extends Error {}

const createWorkspaceArgs = z.object({
  name: z.string().trim().min(1, '--name must not be empty').max(200),
  // The browser's notion of an email: permissive enough for a@b.c and admin@localhost.
  'admin-email': z
    .email({ pattern: z.regexes.html5Email, error: '--admin-email must be an email address' })
    .optional(),
  'admin-name': z.string().trim().min(1, '--admin-name must not be empty').max(200).optional(),
});

const signInLinkArgs = z.object({
  email: z.email({ pattern: z.regexes.html5Email, error: '--email must be an email address' }),
  workspace: z.uuid({ error: '--workspace must be a workspace id' }).optional(),
});

async function createWorkspace(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-name': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.name === undefined) throw new UsageError('create-workspace needs --name');
  const parsed = createWorkspaceArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '));

  const config = loadCliConfig();
  const prisma = createPrismaClient(config.DATABASE_URL, { max: 1 });
  try {
    const workspaces = new WorkspacesService(new WorkspacesRepository(prisma));
    const created = await workspaces.provision({
      name: parsed.data.name,
      adminEmail: parsed.data['admin-email'] ?? DEFAULT_ADMIN_EMAIL,
      adminName: parsed.data['admin-name'],
    });
    process.stdout.write(`${JSON.stringify({ workspaceId: created.workspaceId, apiKey: created.apiKey })}\n`);
  } finally {
    await prisma.$disconnect();
  }
}

async function signInLink(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, workspace: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.email === undefined) throw new UsageError('sign-in-link needs --email');
  const parsed = signInLinkArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '));

  const config = loadCliConfig();
  const prisma = createPrismaClient(config.DATABASE_URL, { max: 1 });
  try {
    const members = new MembersRepository(prisma);
    const { email, workspace } = parsed.data;
    const member =
      workspace === undefined
        ? await members.findSignInCandidate(email)
        : await members
            .findByEmail(workspace as WorkspaceId, email)
            .then((m) => m && { workspaceId: m.workspaceId, memberId: m.id, email: m.email });
    if (!member) {
      throw new Error(
        `${email} is not a member${workspace === undefined ? ' of any workspace' : ` of workspace ${workspace}`} (nor invited)`,
      );
    }
    const url = await issueMagicLink(new MagicLinksRepository(prisma), config.PUBLIC_BASE_URL, member, '/');
    process.stdout.write(`${url}\n`);
  } finally {
    await prisma.$disconnect();
  }
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  'create-workspace': createWorkspace,
  'sign-in-link': signInLink,
};

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    if (command === undefined) throw new UsageError('no command given');
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  await run(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // parseArgs reports unknown or valueless options with a TypeError carrying this code.
  const badOption =
    error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
  if (error instanceof UsageError || badOption) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `error: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
