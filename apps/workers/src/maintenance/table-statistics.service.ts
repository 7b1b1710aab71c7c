import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import type { Pool, PoolClient } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';

/** Advisory lock (class, key) held while one process does the upkeep: N workers, one at a time. */
const LOCK = [0x5e4e, 1] as const;

/**
 * Keeps the planner's statistics current for the project's tables, whatever the server's
 * autovacuum setting. The sync stage's statements are planned from them: on tables never
 * analyzed (a fresh workspace after its backfill, on a server with autovacuum off) the
 * planner guesses one row everywhere and picks index scans that read a whole table per row
 * (measured on the e2e bench: the stage's derived-company read took 25 ms per batch where it
 * takes 1.5 ms once analyzed). A table is analyzed when its rows changed since the last
 * analysis by more than autovacuum's own rule (50 + 10 % of its rows); with autovacuum on, it
 * usually got there first and this finds nothing to do.
 *
 * It also moves what GIN indexes hold in their pending lists into the index proper, which
 * autovacuum does too and a manual ANALYZE does not. A GIN index takes new entries into an
 * unsorted pending list (up to `gin_pending_list_limit`, 4 MB) that every search of the index
 * reads in full: measured on the record search's trigram index over 100,000 people, a
 * 160-page list made one search cost 4.9 ms instead of 1.7 ms. Flushing a list that is empty
 * reads one page, so every GIN index is flushed on every pass: a list then holds at most one
 * interval's writes, and the inserting statements rarely meet a full list they must flush
 * themselves.
 */
@Injectable()
export class TableStatisticsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: TableStatisticsService.name });
  }

  onApplicationBootstrap(): void {
    const every = this.config.TABLE_STATS_INTERVAL_MS;
    if (every === 0) return;
    this.timer = setInterval(() => {
      this.running = this.upkeep().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'table statistics check failed'),
      );
    }, every);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass: stale tables analyzed, GIN pending lists flushed (nothing while another process does it). */
  async upkeep(): Promise<{ analyzed: string[]; flushed: Record<string, number> }> {
    return (
      (await this.exclusively(async (client) => ({
        analyzed: await this.analyze(client),
        flushed: await this.flushGin(client),
      }))) ?? { analyzed: [], flushed: {} }
    );
  }

  /** Analyzes the tables past the threshold; returns their names (none while another process does). */
  async analyzeStale(): Promise<string[]> {
    return (await this.exclusively((client) => this.analyze(client))) ?? [];
  }

  /**
   * Moves every GIN index's pending list into the index; returns the indexes that had one,
   * with the pending-list pages each emptied (nothing while another process does it).
   */
  async flushGinPendingLists(): Promise<Record<string, number>> {
    return (await this.exclusively((client) => this.flushGin(client))) ?? {};
  }

  private async exclusively<T>(work: (client: PoolClient) => Promise<T>): Promise<T | undefined> {
    const client = await this.pool.connect();
    try {
      const { rows: lock } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS ok',
        [...LOCK],
      );
      if (!lock[0]?.ok) return undefined;
      try {
        return await work(client);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [...LOCK]);
      }
    } finally {
      client.release();
    }
  }

  private async analyze(client: PoolClient): Promise<string[]> {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.relname) AS name
             FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
            WHERE s.schemaname = current_schema()
              AND s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0)
            ORDER BY s.n_mod_since_analyze DESC`,
    );
    for (const { name } of rows) await client.query(`ANALYZE ${name}`);
    if (rows.length > 0)
      this.logger.info({ tables: rows.map((r) => r.name) }, 'planner statistics refreshed');
    return rows.map((r) => r.name);
  }

  private async flushGin(client: PoolClient): Promise<Record<string, number>> {
    const { rows } = await client.query<{ name: string; pages: string }>(
      `SELECT i.relname AS name, gin_clean_pending_list(i.oid)::text AS pages
         FROM pg_class i
         JOIN pg_am am ON am.oid = i.relam AND am.amname = 'gin'
         JOIN pg_namespace n ON n.oid = i.relnamespace AND n.nspname = current_schema()
        WHERE i.relkind = 'i'`,
    );
    const flushed: Record<string, number> = {};
    for (const { name, pages } of rows) if (Number(pages) > 0) flushed[name] = Number(pages);
    if (Object.keys(flushed).length > 0) this.logger.debug({ flushed }, 'GIN pending lists flushed');
    return flushed;
  }
}
