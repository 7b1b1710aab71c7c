-- Members act as well as API keys: who changed policies and mappings and who asked for a
-- replay is kept as an actor reference, `member:<uuid>` or `key:<uuid>`. The bare uuids
-- written before name API keys, and still read as such.
ALTER TABLE "field_policy_revision" ALTER COLUMN "changed_by" TYPE TEXT USING "changed_by"::text;
ALTER TABLE "connection_mapping_revision" ALTER COLUMN "changed_by" TYPE TEXT USING "changed_by"::text;
ALTER TABLE "replay" ALTER COLUMN "created_by" TYPE TEXT USING "created_by"::text;
