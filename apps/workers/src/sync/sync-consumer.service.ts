import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { Logger } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import { LogConsumer } from '@syncline/log';
import { SyncStage } from '@syncline/sync-stage';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { JobQueue } from '../jobs/job-queue.service';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { PushService } from './push.service';
import { PushHold } from './push-hold';
import { SYNC_GROUP } from './sync-group';

/**
 * Runs this process's member of the `sync` consumer group: the partitions it leases go
 * through identity, merge and the outbox in the transaction that commits their offsets;
 * after each commit the connections owed writes get a push job for the current window, or,
 * while the stage is behind, once it has caught up or held them for long enough (PushHold).
 */
@Injectable()
export class SyncConsumerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private consumer: LogConsumer | undefined;
  readonly engine: MergeEngine;
  readonly stage: SyncStage;
  /** What the batches of the open transaction owe, acted on once it commits. */
  private readonly owedPush = new Set<string>();
  private readonly owedPull = new Set<string>();
  private readonly hold: PushHold;

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(PushService) private readonly push: PushService,
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: SyncConsumerService.name });
    // Room for every document a batch grown to its largest touches (one per event at most), so
    // a batch never evicts documents it is about to merge into; the bytes bound the memory.
    this.engine = new MergeEngine(new PgMergeStore(pool), {
      cacheBytes: 128 * 1024 * 1024,
      cacheSize: Math.max(2_000, 2 * config.SYNC_BATCH_MAX),
    });
    this.hold = new PushHold({
      maxHoldMs: config.SYNC_BACKLOG_HOLD_MS,
      push: async (connectionIds) => {
        for (const connectionId of connectionIds) await this.push.schedule(connectionId);
      },
      onError: (error) => this.logger.error({ err: error }, 'held push failed to enqueue'),
    });
    this.stage = new SyncStage({
      identity: new IdentityService(),
      engine: this.engine,
      insights: { timeZone: 'UTC', writePeriodMs: config.INSIGHT_WRITE_PERIOD_MS },
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.SYNC_CONSUMER) {
      this.logger.info('sync consumer off (SYNC_CONSUMER=false)');
      return;
    }
    this.consumer = new LogConsumer({
      group: SYNC_GROUP,
      partitions: this.config.LOG_PARTITIONS,
      connection: this.config.DATABASE_URL,
      batchSize: this.config.SYNC_BATCH_SIZE,
      maxBatchSize: this.config.SYNC_BATCH_MAX,
      batchTargetMs: this.config.SYNC_BATCH_TARGET_MS,
      partitionsPerBatch: this.config.SYNC_PARTITIONS_PER_BATCH,
      pollMs: 500,
      handler: async (tx, events, context) => {
        const end = this.metrics.commitSeconds.startTimer({ group: context.group });
        try {
          const owed = await this.stage.handle(tx, events);
          for (const id of owed.push) this.owedPush.add(id);
          for (const id of owed.pull) this.owedPull.add(id);
        } finally {
          end();
        }
      },
      afterCommit: async (_events, batch) => {
        await this.hold.owed(drain(this.owedPush), batch);
        for (const connectionId of drain(this.owedPull))
          await this.jobs.enqueue('connection.pull', { connectionId, reason: 'unknown record notified' });
      },
      onError: (error) => this.logger.error({ err: error }, 'sync consumer error'),
    });
    await this.consumer.start();
    this.logger.info({ partitions: this.config.LOG_PARTITIONS }, 'sync consumer started');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
    // Held pushes go now; if the queue is gone already, the outbox sweep sends their rows.
    await this.hold
      .release()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'held pushes not enqueued at shutdown'));
  }
}

/** The set's members, leaving it empty. */
function drain(set: Set<string>): string[] {
  const list = [...set];
  set.clear();
  return list;
}
