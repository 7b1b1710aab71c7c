-- Each workspace's own connection: the source of edits made in Syncline by its people, so
-- that they are changes on the log like any other. It is never pulled from or written to.
ALTER TYPE "provider" ADD VALUE IF NOT EXISTS 'syncline';
