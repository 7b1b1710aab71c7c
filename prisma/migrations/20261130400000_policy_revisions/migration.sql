-- Every replacement of an entity type's field policies through the API, kept whole per
-- version; the newest version is the set's version (the `If-Match` of the next change).
-- No foreign keys: history outlives the API keys that wrote it.

-- CreateTable
CREATE TABLE "field_policy_revision" (
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "policies" JSONB NOT NULL,
    "changed_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "field_policy_revision_pkey" PRIMARY KEY ("workspace_id","entity_type","version")
);
