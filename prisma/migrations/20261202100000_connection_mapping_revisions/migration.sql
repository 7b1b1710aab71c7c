-- Every replacement of a connection's field mappings through the API, kept whole per version;
-- the newest version is the mappings' version (the `If-Match` of the next change). The set in
-- force stays in connection.field_mappings. No foreign keys: history outlives the API keys
-- that wrote it and the connection's credentials.

-- CreateTable
CREATE TABLE "connection_mapping_revision" (
    "connection_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "workspace_id" UUID NOT NULL,
    "mappings" JSONB NOT NULL,
    "changed_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connection_mapping_revision_pkey" PRIMARY KEY ("connection_id","version")
);

-- CreateIndex
CREATE INDEX "connection_mapping_revision_workspace_id_idx" ON "connection_mapping_revision"("workspace_id");
