import type { ProviderKey } from '@syncline/core';
import type { LogTransaction } from '@syncline/log';
import type { DeletePolicy } from './writeback-rules';

/** A connection of a workspace as writeback sees it. */
export interface TargetConnection {
  id: string;
  provider: ProviderKey;
  status: string;
  deletePolicy: DeletePolicy;
  /** Its backfill is linked and the records it lacked were queued: creates may go to it. */
  reconciled: boolean;
  /** Whose mailbox, calendar or tasks it is (lower case), where the provider named it. */
  accountAddress: string | null;
}

/**
 * A workspace's provider connections, each list reused for `ttlMs` before it is read again:
 * a batch asks for them once per touched entity. A connection disconnected meanwhile is owed
 * nothing all the same (the outbox insert checks it).
 */
export class TargetConnections {
  private readonly lists = new Map<string, { at: number; list: TargetConnection[] }>();

  constructor(private readonly ttlMs: number) {}

  async of(tx: LogTransaction, workspaceId: string): Promise<TargetConnection[]> {
    const cached = this.lists.get(workspaceId);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.list;
    const { rows } = await tx.query<{
      id: string;
      provider: ProviderKey;
      status: string;
      delete_policy: DeletePolicy;
      reconciled: boolean;
      account_address: string | null;
    }>(
      `SELECT id, provider::text AS provider, status::text AS status, delete_policy,
              reconciled_at IS NOT NULL AS reconciled, account_address
         FROM connection WHERE workspace_id = $1 AND provider <> 'syncline' ORDER BY id`,
      [workspaceId],
    );
    const list = rows.map((r) => ({
      id: r.id,
      provider: r.provider,
      status: r.status,
      deletePolicy: r.delete_policy,
      reconciled: r.reconciled,
      accountAddress: r.account_address,
    }));
    this.lists.set(workspaceId, { at: Date.now(), list });
    return list;
  }
}
