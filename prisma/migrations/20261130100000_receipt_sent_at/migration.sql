-- When a write started: a provider's report of a record older than this predates the write,
-- so the write's receipt is not applied to it.
ALTER TABLE "write_receipt" ADD COLUMN "sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
