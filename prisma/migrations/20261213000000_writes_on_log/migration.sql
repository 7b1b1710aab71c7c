-- The push stage's knowledge goes on the log (libs/sync-stage write-events.ts): a `claim`
-- event before a write is sent, a `receipt` event once the provider took it. Both are folded
-- by the sync stage, so write_receipt, the links of records we create and their provider
-- versions are derived from the log like every other derived table.
--
-- write_claim: a write on its way to a record (claimed, no receipt on the log yet); its echo
-- may come before its receipt. Settled (deleted) by the receipt; one never settled stops
-- counting after its lifetime. No foreign keys: a derived table the replay rebuilds.
CREATE TABLE "write_claim" (
    "connection_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "fields" JSONB NOT NULL,
    "prior" JSONB NOT NULL,
    "heads" TEXT[] NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL,
    "ingested_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "write_claim_pkey" PRIMARY KEY ("connection_id", "idempotency_key", "attempt")
);

CREATE INDEX "write_claim_connection_id_entity_type_external_id_idx"
    ON "write_claim"("connection_id", "entity_type", "external_id");
CREATE INDEX "write_claim_entity_id_idx" ON "write_claim"("entity_id");
