-- The order in which a consumer group handled the log: one row per partition of every batch
-- it committed, written in the transaction that moves the offsets. `seq` is taken at the
-- commit, after the batch's work holds its row locks, so two batches that touched the same
-- entity are numbered in the order they took effect. A replay feeds the events back in this
-- order (the live order, not a guess from arrival times). Rows go with the events they name
-- (retention) and with the offsets they recorded (a reset of the group).

-- CreateSequence
CREATE SEQUENCE "consumer_batch_seq";

-- CreateTable
CREATE TABLE "consumer_batch" (
    "group_name" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "partition" INTEGER NOT NULL,
    "since_offset" BIGINT NOT NULL,
    "last_offset" BIGINT NOT NULL,
    "committed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "consumer_batch_pkey" PRIMARY KEY ("group_name", "seq", "partition")
);

-- CreateIndex
CREATE INDEX "consumer_batch_group_name_partition_last_offset_idx" ON "consumer_batch"("group_name", "partition", "last_offset");
