-- Identity: canonical entities, their source links, match keys, possible duplicates and
-- merge/unmerge operations. No foreign keys to workspace or connection: like change_event,
-- rows are written from log events whose tenancy the log has already checked.

-- CreateEnum
CREATE TYPE "possible_duplicate_status" AS ENUM ('open', 'merged', 'dismissed');

-- CreateEnum
CREATE TYPE "identity_operation_kind" AS ENUM ('merge', 'unmerge');

-- CreateTable
CREATE TABLE "entity" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "display_name" TEXT,
    "match_keys" JSONB NOT NULL DEFAULT '{}',
    "merged_into" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "source_link" (
    "workspace_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "entity_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "source_link_pkey" PRIMARY KEY ("connection_id","entity_type","external_id")
);

-- CreateTable
CREATE TABLE "match_key" (
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "entity_id" UUID NOT NULL,

    CONSTRAINT "match_key_pkey" PRIMARY KEY ("workspace_id","entity_type","kind","value","entity_id")
);

-- CreateTable
CREATE TABLE "possible_duplicate" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "entity_a" UUID NOT NULL,
    "entity_b" UUID NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "evidence" JSONB NOT NULL DEFAULT '[]',
    "status" "possible_duplicate_status" NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "possible_duplicate_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "identity_operation" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "kind" "identity_operation_kind" NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "undone_at" TIMESTAMPTZ(3),

    CONSTRAINT "identity_operation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "entity_workspace_id_entity_type_idx" ON "entity"("workspace_id", "entity_type");

-- CreateIndex
CREATE INDEX "entity_merged_into_idx" ON "entity"("merged_into");

-- CreateIndex
CREATE INDEX "source_link_entity_id_idx" ON "source_link"("entity_id");

-- CreateIndex
CREATE INDEX "match_key_entity_id_idx" ON "match_key"("entity_id");

-- CreateIndex
CREATE INDEX "possible_duplicate_workspace_id_status_created_at_idx" ON "possible_duplicate"("workspace_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "possible_duplicate_entity_a_idx" ON "possible_duplicate"("entity_a");

-- CreateIndex
CREATE INDEX "possible_duplicate_entity_b_idx" ON "possible_duplicate"("entity_b");

-- CreateIndex
CREATE INDEX "identity_operation_workspace_id_created_at_idx" ON "identity_operation"("workspace_id", "created_at");

-- AddForeignKey
ALTER TABLE "entity" ADD CONSTRAINT "entity_merged_into_fkey" FOREIGN KEY ("merged_into") REFERENCES "entity"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "source_link" ADD CONSTRAINT "source_link_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "match_key" ADD CONSTRAINT "match_key_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "possible_duplicate" ADD CONSTRAINT "possible_duplicate_entity_a_fkey" FOREIGN KEY ("entity_a") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "possible_duplicate" ADD CONSTRAINT "possible_duplicate_entity_b_fkey" FOREIGN KEY ("entity_b") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;
