-- Sync health over time: one row per provider connection per sampling interval, written by the
-- workers' sampler. A workspace's last hours are one range of the primary key; the bucket in
-- the key makes a second sampler of the same interval a no-op. Retention deletes by time
-- across workspaces, which the BRIN index serves (rows arrive in time order) for a few pages.
-- No foreign keys, like the audit log: retention removes what outlives its connection.
CREATE TABLE "sync_health_sample" (
    "workspace_id" UUID NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,
    "connection_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "lag_events" INTEGER NOT NULL,
    "watermark_delay_seconds" INTEGER,
    "backfill_seen" INTEGER NOT NULL,
    "backfill_total" INTEGER,
    "pending_writes" INTEGER NOT NULL,
    "writes_ok" INTEGER NOT NULL,
    "writes_failed" JSONB NOT NULL DEFAULT '{}',
    "dead_letters_open" INTEGER NOT NULL,
    "consumer_lag" INTEGER NOT NULL,

    CONSTRAINT "sync_health_sample_pkey" PRIMARY KEY ("workspace_id", "sampled_at", "connection_id")
);

CREATE INDEX "sync_health_sample_sampled_at_idx" ON "sync_health_sample" USING BRIN ("sampled_at");
