-- An outbox keeps every row it ever had (sent, superseded), so an entity edited a thousand times
-- has a thousand rows. Two hot reads want only a few of them:
-- the pending rows of the batch's entities, which each sync batch sets aside when it queues newer
-- ones (writeOutbox);
CREATE INDEX "outbox_pending_entity_idx" ON "outbox" ("entity_id") WHERE "status" = 'pending';
-- and the last write sent to a record, whose receipt the push's claim reads (outbox-claim.ts),
-- newest first so that the read stops at it.
CREATE INDEX "outbox_sent_entity_idx" ON "outbox" ("entity_id", "connection_id", "sent_at" DESC NULLS LAST, "id" DESC)
  WHERE "status" = 'sent';
