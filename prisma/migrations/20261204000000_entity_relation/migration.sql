-- Entity-to-entity associations (a person's company, a deal's people and company), as the sync
-- stage derives them in the transaction that commits the log offsets, so a replay rewrites the
-- same rows. `crm` rows: one per carrying record (a HubSpot contact, a deal) and associated
-- record of the same connection, `to_id` null until the associated record is linked. `derived`
-- rows: a person and the company holding the registrable domain of their email, while no CRM
-- gives the person a company. Both ends follow the records' links (merge, unmerge).

-- CreateTable
CREATE TABLE "entity_relation" (
    "key" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "from_type" TEXT NOT NULL,
    "from_id" UUID NOT NULL,
    "to_type" TEXT NOT NULL,
    "to_id" UUID,
    "connection_id" UUID,
    "from_external_id" TEXT,
    "to_external_id" TEXT,
    "evidence" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_relation_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "entity_relation_workspace_id_from_id_idx" ON "entity_relation"("workspace_id", "from_id");

-- CreateIndex
CREATE INDEX "entity_relation_workspace_id_to_id_idx" ON "entity_relation"("workspace_id", "to_id");

-- CreateIndex
CREATE INDEX "entity_relation_connection_id_to_type_to_external_id_idx" ON "entity_relation"("connection_id", "to_type", "to_external_id");

-- CreateIndex
CREATE INDEX "entity_relation_connection_id_from_type_from_external_id_idx" ON "entity_relation"("connection_id", "from_type", "from_external_id");

-- AddForeignKey
ALTER TABLE "entity_relation" ADD CONSTRAINT "entity_relation_from_id_fkey" FOREIGN KEY ("from_id") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "entity_relation" ADD CONSTRAINT "entity_relation_to_id_fkey" FOREIGN KEY ("to_id") REFERENCES "entity"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A person's addresses by host, for the people a company's domain derives (an expression
-- index: schema.prisma cannot declare it; see prisma/test-support/expression-indexes.ts).
CREATE INDEX "match_key_email_host_idx" ON "match_key"("workspace_id", split_part("value", '@', 2))
  WHERE "kind" = 'email' AND "entity_type" = 'person';
