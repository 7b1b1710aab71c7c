-- Who settled a possible duplicate, and when. A dismissed pair is never suggested again: its
-- id is derived from the two entities, and identity inserts it only if it is not there.
ALTER TABLE "possible_duplicate" ADD COLUMN "reviewed_by" TEXT, ADD COLUMN "reviewed_at" TIMESTAMPTZ(3);
