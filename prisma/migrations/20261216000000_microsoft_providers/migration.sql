-- Microsoft 365 through Microsoft Graph: Outlook's calendar, Outlook's mail and Microsoft To Do,
-- one connection each, as Google's three products are. Before the workspace's own connection
-- (`syncline`), in the order schema.prisma lists them.
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-calendar' BEFORE 'syncline';
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-mail' BEFORE 'syncline';
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-todo' BEFORE 'syncline';
