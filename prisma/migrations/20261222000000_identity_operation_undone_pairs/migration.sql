-- A record whose keys name two entities joins them, unless someone kept the pair apart: among
-- other things, a merge of the two (either way round) that was undone. Identity asks for it on
-- every such join; only undone operations are indexed, a few against the many joins.
CREATE INDEX "identity_operation_undone_pair_idx" ON "identity_operation" (("payload"->>'absorbedId'), ("payload"->>'survivorId'))
  WHERE "undone_at" IS NOT NULL;
