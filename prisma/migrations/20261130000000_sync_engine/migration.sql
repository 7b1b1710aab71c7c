-- AlterTable: the sync engine's per-connection state
ALTER TABLE "connection"
    ADD COLUMN "delete_policy" TEXT NOT NULL DEFAULT 'unlink',
    ADD COLUMN "field_mappings" JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "backfill_seen" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "backfill_total" INTEGER,
    ADD COLUMN "last_pull_at" TIMESTAMPTZ(3),
    ADD COLUMN "last_success_at" TIMESTAMPTZ(3),
    ADD COLUMN "last_error_code" TEXT,
    ADD COLUMN "reconciled_at" TIMESTAMPTZ(3);

-- AlterTable: the merged view of an entity, as the API reads it
ALTER TABLE "entity"
    ADD COLUMN "fields" JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "provenance" JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "heads" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "version" BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN "flags" JSONB NOT NULL DEFAULT '{}';

-- AlterTable: the provider version of a linked record as we last saw it (from its changes
-- or our write's receipt): a write is conditional on it, so it never overwrites a newer edit
ALTER TABLE "source_link" ADD COLUMN "provider_version" TEXT;

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "connection_id" UUID NOT NULL,
    "op" TEXT NOT NULL,
    "external_id" TEXT,
    "fields" JSONB NOT NULL,
    "heads" TEXT[] NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_at" TIMESTAMPTZ(3),
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "write_receipt" (
    "connection_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "fields" JSONB NOT NULL,
    "heads" TEXT[] NOT NULL,
    "provider_version" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "applied_at" TIMESTAMPTZ(3),

    CONSTRAINT "write_receipt_pkey" PRIMARY KEY ("connection_id","idempotency_key")
);

-- CreateTable
CREATE TABLE "push_subscription" (
    "id" TEXT NOT NULL,
    "connection_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "resource_id" TEXT,
    "token_ciphertext" BYTEA NOT NULL,
    "token_key_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_subscription_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "outbox_connection_id_idempotency_key_key" ON "outbox"("connection_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "outbox_connection_id_status_id_idx" ON "outbox"("connection_id", "status", "id");

-- CreateIndex
CREATE INDEX "outbox_entity_id_idx" ON "outbox"("entity_id");

-- CreateIndex
CREATE INDEX "write_receipt_connection_id_entity_type_external_id_idx" ON "write_receipt"("connection_id", "entity_type", "external_id");

-- CreateIndex
CREATE INDEX "push_subscription_connection_id_idx" ON "push_subscription"("connection_id");

-- CreateIndex
CREATE INDEX "push_subscription_expires_at_idx" ON "push_subscription"("expires_at");
