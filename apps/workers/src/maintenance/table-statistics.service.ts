import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';

/** Advisory lock (class, key) held while one process analyzes: N workers, one ANALYZE at a time. */
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
      this.running = this.analyzeStale().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'table statistics check failed'),
      );
    }, every);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Analyzes the tables past the threshold; returns their names (none while another process does). */
  async analyzeStale(): Promise<string[]> {
    const client = await this.pool.connect();
    try {
      const { rows: lock } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS ok',
        [...LOCK],
      );
      if (!lock[0]?.ok) return [];
      try {
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
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [...LOCK]);
      }
    } finally {
      client.release();
    }
  }
}
