-- A connection's dry-run report as the workers last computed it (the `connection.dry-run`
-- job), which the API serves until the connection's backfill moves on: `staged_up_to` is the
-- last staged change it covers and `complete` whether the backfill had finished. A failed
-- computation leaves its reason; the report before it (if any: all four null until the
-- first) stays. One row per connection in dry
-- run; no foreign keys, like staged_change: a disconnect deletes both.
CREATE TABLE "dry_run_report" (
    "connection_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "staged_up_to" BIGINT,
    "complete" BOOLEAN,
    "report" JSONB,
    "computed_at" TIMESTAMPTZ(3),
    "failure_reason" TEXT,
    "failed_at" TIMESTAMPTZ(3),

    CONSTRAINT "dry_run_report_pkey" PRIMARY KEY ("connection_id")
);
