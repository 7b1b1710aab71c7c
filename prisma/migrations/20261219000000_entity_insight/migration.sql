-- A record's current activity insights, one row per person, company or deal with any: the
-- latest pane (insight_pane) and its next meeting, as of the log's time at the last batch
-- that moved them. A fold of the log, written by the sync stage with the group's offsets.
-- Lists sort and filter by it; the CRM properties Syncline owns are written from `crm`.
CREATE TABLE "entity_insight" (
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    "last_contacted_at" TIMESTAMPTZ(3),
    -- mail_in | mail_out | meeting
    "last_contacted_via" TEXT,
    -- The earliest meeting after the log's time when the row was written.
    "next_meeting_at" TIMESTAMPTZ(3),
    -- warming | steady | cooling | cold
    "trend" TEXT NOT NULL,
    -- Mails in and out and meetings held in the last 30 days.
    "engagement_30" INTEGER NOT NULL DEFAULT 0,
    -- The values of the CRM properties Syncline owns (insights/crm-properties.ts), by field.
    "crm" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "entity_insight_pkey" PRIMARY KEY ("entity_id")
);
-- People by last contacted (a keyset over it), the cold ones, and meetings that have started.
CREATE INDEX "entity_insight_contacted_idx" ON "entity_insight" ("workspace_id", "entity_type", "last_contacted_at", "entity_id");
CREATE INDEX "entity_insight_trend_idx" ON "entity_insight" ("workspace_id", "entity_type", "trend");
CREATE INDEX "entity_insight_next_meeting_idx" ON "entity_insight" ("workspace_id", "next_meeting_at");

-- A write that may wait: not claimed before this instant (the CRM properties of insights are
-- written at most once per record per trigger period).
ALTER TABLE "outbox" ADD COLUMN "not_before" TIMESTAMPTZ(3);
