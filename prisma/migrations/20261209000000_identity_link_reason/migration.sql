-- Why each source record is linked to its entity (rule, evidence, score), shown to admins.
-- Links made before this was kept read as unknown (null).
ALTER TABLE "source_link" ADD COLUMN "link_reason" JSONB;
