-- Microsoft 365 through Microsoft Graph: Outlook's calendar, Outlook's mail and Microsoft To Do,
-- one connection each, as Google's three products are.
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-calendar';
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-mail';
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'microsoft-todo';
