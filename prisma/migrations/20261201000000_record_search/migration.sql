-- Record lists: lookups by email and domain, free-text search, filters and sorting over the
-- merged view. The expression indexes cannot be written in schema.prisma; they are listed in
-- prisma/test-support/expression-indexes.ts, which the schema test checks.

-- pg_trgm ships with PostgreSQL's contrib (Debian's postgresql and the postgres image).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "entity_workspace_id_entity_type_updated_at_id_idx" ON "entity"("workspace_id", "entity_type", "updated_at", "id");

-- Expression indexes: the exact forms RecordsRepository.list writes.
CREATE INDEX "entity_email_lower_idx" ON "entity" ("workspace_id", "entity_type", lower(fields->>'email'));
CREATE INDEX "entity_domain_lower_idx" ON "entity" ("workspace_id", "entity_type", lower(fields->>'domain'));
CREATE INDEX "entity_owner_idx" ON "entity" ("workspace_id", "entity_type", (fields->>'ownerId'));
CREATE INDEX "entity_search_trgm_idx" ON "entity" USING gin (
  (lower(coalesce(display_name, '') || ' ' || coalesce(fields->>'email', '') || ' ' || coalesce(fields->>'domain', ''))) gin_trgm_ops
);
CREATE INDEX "entity_name_lower_idx" ON "entity" ("workspace_id", "entity_type", lower(coalesce(display_name, '')), "id");
