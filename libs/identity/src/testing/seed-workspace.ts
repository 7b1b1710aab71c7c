import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

/** A workspace with one live connection per named provider; returns the workspace's id and theirs. */
export async function seedWorkspace<K extends string>(
  pool: Pool,
  providers: Record<K, string>,
): Promise<{ workspaceId: string; connections: Record<K, string> }> {
  const workspaceId = randomUUID();
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `ws-${workspaceId}`]);
  const connections = {} as Record<K, string>;
  for (const [key, provider] of Object.entries(providers) as [K, string][]) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, $3::provider, $4, 'live')`,
      [id, workspaceId, provider, `acct-${id}`],
    );
    connections[key] = id;
  }
  return { workspaceId, connections };
}
