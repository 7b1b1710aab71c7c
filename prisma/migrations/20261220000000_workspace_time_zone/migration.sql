-- The zone a workspace's days are cut in (IANA), as its admin set it, with the revision the
-- change log carries (a `time_zone` event per revision). The activity insights' windows take it
-- from the log, where it stands: `insights_state.time_zone` is the zone the fold's state is in.
ALTER TABLE "workspace" ADD COLUMN "time_zone" TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE "workspace" ADD COLUMN "time_zone_version" INTEGER NOT NULL DEFAULT 0;
-- Null: the sync stage's default zone (no change of zone on the log yet).
ALTER TABLE "insights_state" ADD COLUMN "time_zone" TEXT;
