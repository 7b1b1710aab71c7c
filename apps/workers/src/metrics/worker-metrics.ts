import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import type { Pool } from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { JOB_MAP_TOKEN, type JobMap } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children'] as const;

/**
 * Prometheus metrics of the workers. A registry per process instance (not prom-client's
 * global one), so several worker instances in one test process do not collide.
 *
 * Counters count what this process did. Gauges read from Postgres or Redis at scrape time
 * (`collect`) describe shared state, so every worker process reports the same value.
 */
@Injectable()
export class WorkerMetrics {
  readonly registry = new Registry();

  // Ingest (pull).
  readonly pullChanges = new Counter({
    name: 'syncline_pull_changes_total',
    help: 'Changes read from providers by pulls (backfill and incremental), by provider.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  readonly connectorErrors = new Counter({
    name: 'syncline_connector_errors_total',
    help: 'Connector calls that failed, by provider and error code.',
    labelNames: ['provider', 'code'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'syncline_rate_limited_total',
    help: 'Provider answers that said "slow down" (429 or a quota error), by provider.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  // Writeback and merge: declared here for the push processor and the log consumers.
  readonly pushWrites = new Counter({
    name: 'syncline_push_writes_total',
    help: 'Writes sent to providers, by provider and operation (create, update, delete).',
    labelNames: ['provider', 'op'] as const,
    registers: [this.registry],
  });
  readonly pushErrors = new Counter({
    name: 'syncline_push_errors_total',
    help: 'Writes to providers that failed, by provider and error code.',
    labelNames: ['provider', 'code'] as const,
    registers: [this.registry],
  });
  readonly commitSeconds = new Histogram({
    name: 'syncline_consumer_commit_seconds',
    help: 'Time a log consumer took to apply and commit one batch, by consumer group.',
    labelNames: ['group'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly partitionLag = new Gauge({
    name: 'syncline_partition_lag_events',
    help: 'Events on a log partition that a consumer group has not committed yet.',
    labelNames: ['group', 'partition'] as const,
    registers: [this.registry],
  });

  // Read at scrape time.
  readonly backfillSeen = new Gauge({
    name: 'syncline_backfill_seen',
    help: 'Records a connection backfill has read so far.',
    labelNames: ['connection'] as const,
    registers: [this.registry],
  });
  readonly backfillTotal = new Gauge({
    name: 'syncline_backfill_total',
    help: 'Records the provider estimates a connection backfill will read.',
    labelNames: ['connection'] as const,
    registers: [this.registry],
  });
  readonly watermarkDelaySeconds = new Gauge({
    name: 'syncline_watermark_delay_seconds',
    help: 'How far a connection watermark (event time known complete) is behind now.',
    labelNames: ['connection'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'syncline_queue_jobs',
    help: 'BullMQ jobs per queue and state.',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });
  readonly deadLetters = new Gauge({
    name: 'syncline_dead_letters_open',
    help: 'Dead letters waiting for a retry or a discard.',
    registers: [this.registry],
  });

  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(JOB_MAP_TOKEN) private readonly map: JobMap,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: WorkerMetrics.name });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition text; reads the shared-state gauges first. */
  async render(): Promise<string> {
    await Promise.all([this.collectConnections(), this.collectQueues(), this.collectDeadLetters()]);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  // One failing source must not fail the scrape: its gauges keep their last values.
  private async collectConnections(): Promise<void> {
    try {
      const { rows } = await this.pool.query<{
        id: string;
        backfill_seen: number;
        backfill_total: number | null;
        delay_s: number | null;
      }>(
        `SELECT id, backfill_seen, backfill_total,
                EXTRACT(EPOCH FROM (now() - watermark))::float8 AS delay_s
           FROM connection WHERE status IN ('backfilling', 'live') AND provider <> 'syncline'`,
      );
      this.backfillSeen.reset();
      this.backfillTotal.reset();
      this.watermarkDelaySeconds.reset();
      for (const row of rows) {
        this.backfillSeen.set({ connection: row.id }, row.backfill_seen);
        if (row.backfill_total !== null) this.backfillTotal.set({ connection: row.id }, row.backfill_total);
        if (row.delay_s !== null)
          this.watermarkDelaySeconds.set({ connection: row.id }, Math.max(0, row.delay_s));
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'metrics: cannot read connections');
    }
  }

  private async collectQueues(): Promise<void> {
    try {
      for (const name of Object.keys(this.map.queues)) {
        const counts = await this.jobs.queue(name).getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) this.queueDepth.set({ queue: name, state }, counts[state] ?? 0);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'metrics: cannot read queue depths');
    }
  }

  private async collectDeadLetters(): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM dead_letter WHERE status = 'open'`,
      );
      this.deadLetters.set(rows[0]?.n ?? 0);
    } catch (error) {
      this.logger.warn({ err: error }, 'metrics: cannot count dead letters');
    }
  }
}
