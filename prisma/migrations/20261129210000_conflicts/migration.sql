-- CreateEnum
CREATE TYPE "merge_conflict_status" AS ENUM ('open', 'resolved');

-- CreateTable
CREATE TABLE "entity_doc" (
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "doc" BYTEA NOT NULL,
    "doc_bytes" INTEGER NOT NULL DEFAULT 0,
    "compacted_seq" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_doc_pkey" PRIMARY KEY ("entity_id")
);

-- CreateTable
CREATE TABLE "entity_doc_change" (
    "entity_id" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "chunk" BYTEA NOT NULL,

    CONSTRAINT "entity_doc_change_pkey" PRIMARY KEY ("entity_id","seq")
);

-- CreateTable
CREATE TABLE "entity_synced_heads" (
    "entity_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "heads" TEXT[] NOT NULL,
    "stale" JSONB NOT NULL DEFAULT '{}',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_synced_heads_pkey" PRIMARY KEY ("entity_id","connection_id")
);

-- CreateTable
CREATE TABLE "merge_conflict" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "field" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "candidates" JSONB NOT NULL,
    "status" "merge_conflict_status" NOT NULL DEFAULT 'open',
    "resolution" JSONB,
    "resolved_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "merge_conflict_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "field_policy" (
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "field" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "priority" JSONB NOT NULL DEFAULT '[]',
    "version" INTEGER NOT NULL DEFAULT 1,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "field_policy_pkey" PRIMARY KEY ("workspace_id","entity_type","field")
);

-- CreateIndex
CREATE INDEX "entity_doc_workspace_id_idx" ON "entity_doc"("workspace_id");

-- CreateIndex
CREATE INDEX "merge_conflict_workspace_id_status_created_at_idx" ON "merge_conflict"("workspace_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "merge_conflict_entity_id_idx" ON "merge_conflict"("entity_id");
