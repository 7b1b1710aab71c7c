-- Who took part in an activity (a meeting's organizer and attendees, a mail's from/to/cc),
-- as the sync stage derives it from the activity's merged view, in the transaction that
-- commits the log offsets: a replay rewrites the same rows. One row per activity, role and
-- address; `party_id` is the person the address belonged to when the row was written (null
-- while no person has it). A merged-away person's rows stay under its id: reads follow
-- `entity.merged_into`, so an unmerge needs no rewrite.

-- CreateTable
CREATE TABLE "entity_association" (
    "activity_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "activity_type" TEXT NOT NULL,
    "party_id" UUID,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_association_pkey" PRIMARY KEY ("activity_id","role","email")
);

-- CreateIndex
CREATE INDEX "entity_association_party_timeline_idx" ON "entity_association"("workspace_id", "party_id", "occurred_at", "activity_id");

-- CreateIndex
CREATE INDEX "entity_association_workspace_id_email_idx" ON "entity_association"("workspace_id", "email");

-- AddForeignKey
ALTER TABLE "entity_association" ADD CONSTRAINT "entity_association_activity_id_fkey" FOREIGN KEY ("activity_id") REFERENCES "entity"("id") ON DELETE CASCADE ON UPDATE CASCADE;
