-- Dry run of a new connection: its changes are staged instead of appended to the log until
-- an admin enables it (then they go onto the log under their event keys, nothing twice).
ALTER TABLE "connection" ADD COLUMN "dry_run" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "staged_change" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "event_key" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "op" TEXT NOT NULL,
    "fields" JSON NOT NULL DEFAULT '{}',
    "field_times" JSON NOT NULL DEFAULT '{}',
    "event_time" TIMESTAMPTZ(3) NOT NULL,
    "provider_version" TEXT,
    "origin" JSON,
    "staged_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "staged_change_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "staged_change_connection_id_event_key_key" ON "staged_change"("connection_id", "event_key");

-- CreateIndex
CREATE INDEX "staged_change_connection_id_id_idx" ON "staged_change"("connection_id", "id");
