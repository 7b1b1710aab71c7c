import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { IdentityService } from '@syncline/identity';
import type { LogEvent } from '@syncline/log';
import type { Pool } from 'pg';
import { SyncHandler } from '../sync-handler';

/** A log event as a test writes it: the log's own columns are filled in by `handle`. */
export type StageEvent = Omit<LogEvent, 'partition' | 'offset' | 'ingestedAt' | 'providerVersion'>;

/**
 * The sync stage in-process against a test database: each `handle` call is one batch, in one
 * transaction, as the log's consumer hands it over (offsets rise across calls).
 */
export function syncStage(pool: Pool): { handle: (...batch: StageEvent[]) => Promise<void> } {
  const engine = new MergeEngine(new PgMergeStore(pool));
  const handler = new SyncHandler({ identity: new IdentityService(), engine, connectionsTtlMs: 0 });
  let offset = 0;
  const handle = async (...batch: StageEvent[]) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await handler.handle(
        client,
        batch.map((event) => ({
          ...event,
          partition: 0,
          offset: ++offset,
          ingestedAt: new Date(),
          providerVersion: null,
        })),
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  };
  return { handle };
}

/** A workspace with live connections of the given providers, none reconciled unless asked. */
export async function seedConnections<K extends string>(
  pool: Pool,
  providers: Record<K, string>,
  options: { reconciled?: boolean } = {},
): Promise<{ workspaceId: string } & Record<K, string>> {
  const workspaceId = randomUUID();
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `ws-${workspaceId}`]);
  const ids = {} as Record<K, string>;
  for (const [key, provider] of Object.entries(providers) as [K, string][]) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, reconciled_at)
       VALUES ($1, $2, $3::provider, $4, 'live', CASE WHEN $5 THEN now() END)`,
      [id, workspaceId, provider, `acct-${id}`, options.reconciled === true],
    );
    ids[key] = id;
  }
  return { workspaceId, ...ids };
}

/** A HubSpot contact as its pull reports it at `at`. */
export const contactEvent = (
  workspaceId: string,
  connectionId: string,
  externalId: string,
  at: Date,
  fields: Record<string, unknown>,
): StageEvent => ({
  workspaceId,
  connectionId,
  entityType: 'person',
  externalId,
  op: 'upsert',
  eventKey: `contacts:${externalId}:${at.getTime()}`,
  fields,
  fieldTimes: {},
  eventTime: at,
  origin: null,
});
