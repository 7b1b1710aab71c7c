-- Associations written back: a pair one CRM associates (entity_relation) is written to every
-- other HubSpot connection holding both records, and removed there again only when it was
-- Syncline that wrote it there. `relation_mirror` is the stage's note, per connection and pair
-- of entities, of those it wrote (or owes) there, and of a CRM's own association removed there
-- (declined: an older assertion elsewhere is not written back to it). Written in the
-- transaction that commits the log offsets (a replay rewrites it). No foreign keys, like
-- write_receipt: a replay deletes and recreates the entities under the same ids.

-- The change-log event that first carried a `crm` pair: a pair removed and associated again is
-- a new assertion, and its writes get new idempotency keys.
ALTER TABLE "entity_relation" ADD COLUMN "since" TEXT,
    ADD COLUMN "since_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "relation_mirror" (
    "key" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "from_type" TEXT NOT NULL,
    "from_id" UUID NOT NULL,
    "to_type" TEXT NOT NULL,
    "to_id" UUID NOT NULL,
    "associate_key" TEXT,
    "declined_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "relation_mirror_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "relation_mirror_workspace_id_from_id_idx" ON "relation_mirror"("workspace_id", "from_id");

-- CreateIndex
CREATE INDEX "relation_mirror_workspace_id_to_id_idx" ON "relation_mirror"("workspace_id", "to_id");
