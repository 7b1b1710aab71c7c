-- Activity insights (libs/insights, folded by the sync stage): what each activity counts for,
-- per person, and the event-time windowing stage's state and results. All four are a fold of
-- the log, written in the sync stage's transaction with the group's offsets.

-- What an activity counts for, per person (contributionsOf) and per company and deal of theirs: the "before" of the next version
-- of that activity, so the diffs fed to the windows take one version to the next exactly.
CREATE TABLE "activity_contribution" (
    "activity_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    -- mail_in | mail_out | meeting
    "kind" TEXT NOT NULL,
    -- The activity's event time: a mail's sentAt, a meeting's start.
    "event_time" TIMESTAMPTZ(3) NOT NULL,
    "workspace_id" UUID NOT NULL,
    "thread_id" TEXT,
    -- The connection whose change made the version counted (its watermark holds the result).
    "connection_id" UUID NOT NULL,

    CONSTRAINT "activity_contribution_pkey" PRIMARY KEY ("activity_id", "entity_id", "kind", "event_time")
);
-- A record's next meeting, and the activities a person merge moves.
CREATE INDEX "activity_contribution_entity_idx" ON "activity_contribution" ("workspace_id", "entity_id", "kind", "event_time");

-- The windowing stage's state per workspace (InsightsEngine.encode), and its watermark.
CREATE TABLE "insights_state" (
    "workspace_id" UUID NOT NULL,
    "state" BYTEA NOT NULL,
    -- The workspace's watermark: every result is complete up to it (null before the first).
    "watermark" TIMESTAMPTZ(3),
    -- The connections holding it back: [{ connectionId, watermark }].
    "held_by" JSONB NOT NULL DEFAULT '[]',
    "late" INTEGER NOT NULL DEFAULT 0,
    "side_output" INTEGER NOT NULL DEFAULT 0,
    "version" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "insights_state_pkey" PRIMARY KEY ("workspace_id")
);

-- Results: one pane per (record, window end) where the record's result changed that day; a
-- record's result on a day is the latest pane on or before it. A record is a person, or a
-- company or deal counted over its people.
CREATE TABLE "insight_pane" (
    "entity_id" UUID NOT NULL,
    -- The window's last day, in the workspace's zone.
    "window_end" DATE NOT NULL,
    "workspace_id" UUID NOT NULL,
    "metrics" JSONB NOT NULL,
    -- early | on_time | late: the trigger that emitted it. Complete up to the workspace's
    -- watermark (insights_state): a pane for a day it passed is final but for late activities.
    "trigger" TEXT NOT NULL,

    CONSTRAINT "insight_pane_pkey" PRIMARY KEY ("entity_id", "window_end")
);
CREATE INDEX "insight_pane_workspace_idx" ON "insight_pane" ("workspace_id", "window_end");

-- Contributions that came later than the allowed lateness: counted, kept, changing nothing.
CREATE TABLE "insights_side_output" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" UUID NOT NULL,
    "activity_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "event_time" TIMESTAMPTZ(3) NOT NULL,
    "sign" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "connection_id" UUID NOT NULL,

    CONSTRAINT "insights_side_output_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "insights_side_output_workspace_idx" ON "insights_side_output" ("workspace_id");
