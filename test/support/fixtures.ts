import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

export interface SeededConnection {
  workspaceId: string;
  connectionId: string;
}

/** A workspace with one HubSpot connection, written with plain SQL. */
export async function seedConnection(pool: Pool, label = 'test'): Promise<SeededConnection> {
  const workspaceId = randomUUID();
  const connectionId = randomUUID();
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `ws-${label}`]);
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES ($1, $2, 'hubspot', $3, 'live')`,
    [connectionId, workspaceId, `portal-${label}-${connectionId.slice(0, 8)}`],
  );
  return { workspaceId, connectionId };
}

/**
 * One seeded workspace (with its connection) per partition: a workspace's changes all go to
 * one partition, so a test whose events must spread over the partitions spreads them over
 * these. `partitionOf` is the log's (`ChangeLog.partitionOf`).
 */
export async function seedOnePerPartition(
  pool: Pool,
  partitions: number,
  partitionOf: (conn: SeededConnection) => number,
): Promise<SeededConnection[]> {
  const byPartition = new Map<number, SeededConnection>();
  for (let tries = 0; byPartition.size < partitions; tries++) {
    if (tries === 1_000) throw new Error(`no workspace found for some of ${partitions} partitions`);
    const seeded = await seedConnection(pool, `spread-${tries}`);
    if (!byPartition.has(partitionOf(seeded))) byPartition.set(partitionOf(seeded), seeded);
  }
  return [...byPartition.entries()].sort(([a], [b]) => a - b).map(([, seeded]) => seeded);
}

/** A valid change for the log, with overrides. */
export function change(
  conn: SeededConnection,
  overrides: Partial<Record<string, unknown>> & { externalId?: string; eventKey?: string } = {},
): Record<string, unknown> {
  const externalId = overrides.externalId ?? 'c-1';
  return {
    workspaceId: conn.workspaceId,
    connectionId: conn.connectionId,
    entityType: 'person',
    externalId,
    op: 'upsert',
    eventKey: overrides.eventKey ?? `${externalId}:${randomUUID()}`,
    eventTime: new Date('2026-11-01T10:00:00Z'),
    fields: { email: `${externalId}@example.com` },
    ...overrides,
  };
}
