-- CreateEnum
CREATE TYPE "role" AS ENUM ('admin', 'sales');

-- CreateEnum
CREATE TYPE "provider" AS ENUM ('hubspot', 'google-calendar', 'gmail', 'google-tasks');

-- CreateEnum
CREATE TYPE "connection_status" AS ENUM ('pending', 'backfilling', 'live', 'paused', 'needs_reauth', 'error', 'disconnected');

-- CreateEnum
CREATE TYPE "dead_letter_status" AS ENUM ('open', 'retried', 'discarded');

-- CreateTable
CREATE TABLE "workspace" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_user" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "role" "role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "user_id" UUID,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "role" "role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connection" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "provider" "provider" NOT NULL,
    "external_account_id" TEXT NOT NULL,
    "display_name" TEXT,
    "status" "connection_status" NOT NULL DEFAULT 'pending',
    "status_reason" TEXT,
    "credentials_ciphertext" BYTEA,
    "credentials_key_id" TEXT,
    "cursors" JSONB NOT NULL DEFAULT '{}',
    "watermark" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "log_partition" (
    "partition" INTEGER NOT NULL,
    "next_offset" BIGINT NOT NULL DEFAULT 1,

    CONSTRAINT "log_partition_pkey" PRIMARY KEY ("partition")
);

-- CreateTable
CREATE TABLE "change_event" (
    "partition" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "event_key" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "op" TEXT NOT NULL,
    "fields" JSON NOT NULL DEFAULT '{}',
    "field_times" JSON NOT NULL DEFAULT '{}',
    "event_time" TIMESTAMPTZ(3) NOT NULL,
    "ingested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "provider_version" TEXT,
    "origin" JSON,

    CONSTRAINT "change_event_pkey" PRIMARY KEY ("partition","offset")
);

-- CreateTable
CREATE TABLE "consumer_offset" (
    "group_name" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "committed_offset" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "consumer_offset_pkey" PRIMARY KEY ("group_name","partition")
);

-- CreateTable
CREATE TABLE "dead_letter" (
    "id" UUID NOT NULL,
    "workspace_id" UUID,
    "source" TEXT NOT NULL,
    "group_name" TEXT,
    "partition" INTEGER,
    "offset" BIGINT,
    "connection_id" UUID,
    "event_key" TEXT,
    "payload" JSONB NOT NULL,
    "error_code" TEXT NOT NULL,
    "error_message" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "status" "dead_letter_status" NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "dead_letter_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_user_workspace_id_email_key" ON "app_user"("workspace_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "api_key_prefix_key" ON "api_key"("prefix");

-- CreateIndex
CREATE INDEX "api_key_workspace_id_idx" ON "api_key"("workspace_id");

-- CreateIndex
CREATE INDEX "connection_workspace_id_status_idx" ON "connection"("workspace_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "connection_workspace_id_provider_external_account_id_key" ON "connection"("workspace_id", "provider", "external_account_id");

-- CreateIndex
CREATE UNIQUE INDEX "change_event_connection_id_event_key_key" ON "change_event"("connection_id", "event_key");

-- CreateIndex
CREATE INDEX "dead_letter_workspace_id_status_created_at_idx" ON "dead_letter"("workspace_id", "status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "dead_letter_source_group_name_partition_offset_key" ON "dead_letter"("source", "group_name", "partition", "offset");

-- AddForeignKey
ALTER TABLE "app_user" ADD CONSTRAINT "app_user_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "connection" ADD CONSTRAINT "connection_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dead_letter" ADD CONSTRAINT "dead_letter_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
