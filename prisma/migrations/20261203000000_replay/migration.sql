-- Replays of a workspace's derived state from the change log (POST /api/v1/replays): status,
-- progress and the report. No foreign keys, like audit_log: a replay outlives the key that
-- asked for it.

-- CreateTable
CREATE TABLE "replay" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "mode" TEXT NOT NULL,
    "from_event_time" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL DEFAULT 'queued',
    "created_by" UUID NOT NULL,
    "events_total" INTEGER,
    "events_replayed" INTEGER NOT NULL DEFAULT 0,
    "report" JSONB,
    "failure_reason" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "replay_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "replay_workspace_id_created_at_idx" ON "replay"("workspace_id", "created_at");
