-- Whose mailbox, calendar or task list a connection is: the person's address, as the provider
-- named it when it proved the account (Google: the verified address; Microsoft: the mailbox's
-- address from Graph's /me). A meeting or a task is copied into a person's own calendar or task
-- list only when it is theirs, so two salespeople's connections never receive each other's.
ALTER TABLE "connection" ADD COLUMN "account_address" TEXT;

-- A Google connection's account is its address.
UPDATE "connection" SET "account_address" = lower("external_account_id")
 WHERE "provider" IN ('google-calendar', 'gmail', 'google-tasks');
