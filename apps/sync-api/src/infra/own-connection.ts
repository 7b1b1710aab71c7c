import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { INTERNAL_PROVIDER, type WorkspaceId } from '@syncline/core';
import type { Pool } from 'pg';
import { LOG_POOL } from './log-pool';

/**
 * The workspace's own connection (provider `syncline`): what the log's changes made in
 * Syncline name as their connection (edits, identity operations, field policies). Made on
 * first use; a connection never changes workspace, so the id is kept for the process's life.
 */
@Injectable()
export class OwnConnections {
  private readonly known = new Map<string, string>();

  constructor(@Inject(LOG_POOL) private readonly pool: Pool) {}

  async of(workspaceId: WorkspaceId): Promise<string> {
    const known = this.known.get(workspaceId);
    if (known !== undefined) return known;
    await this.pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, display_name, status, reconciled_at)
       VALUES ($1, $2, $3::provider, $4, 'Edits made in Syncline', 'live', now())
       ON CONFLICT (workspace_id, provider, external_account_id) DO NOTHING`,
      [randomUUID(), workspaceId, INTERNAL_PROVIDER, INTERNAL_PROVIDER],
    );
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM connection WHERE workspace_id = $1 AND provider = $2::provider AND external_account_id = $3`,
      [workspaceId, INTERNAL_PROVIDER, INTERNAL_PROVIDER],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw new Error(`workspace ${workspaceId} has no connection of its own`);
    this.known.set(workspaceId, id);
    return id;
  }
}
