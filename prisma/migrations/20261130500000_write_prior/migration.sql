-- What the target held of the fields a write replaces (a field it never held is absent): a
-- provider's report from before the write is told apart from an edit made before it.
ALTER TABLE "outbox" ADD COLUMN "prior" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "write_receipt" ADD COLUMN "prior" JSONB NOT NULL DEFAULT '{}';
