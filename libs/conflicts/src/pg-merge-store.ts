import type { Queryable } from '@syncline/core';
import type { SyncedState } from './entity-document';
import type { ConflictResolution, MergeStore, StoredConflict, StoredDocument } from './merge-store';
import {
  type ConflictRecord,
  type FieldPolicy,
  POLICY_KINDS,
  type PolicyKind,
  type PolicyMap,
} from './types';

interface ConflictRow {
  id: string;
  workspace_id: string;
  entity_id: string;
  field: string;
  kind: 'concurrent' | 'late';
  policy: PolicyKind;
  candidates: StoredCandidate[];
  status: 'open' | 'resolved';
  resolution: { winner?: StoredCandidate; value?: unknown; userId?: string; at?: string } | null;
  created_at: Date;
}

type StoredCandidate = {
  value: unknown;
  source: ConflictRecord['candidates'][number]['source'];
  eventTime: string;
};

const toCandidate = (c: StoredCandidate) => ({
  value: c.value,
  source: c.source,
  eventTime: new Date(c.eventTime),
});

/**
 * MergeStore on PostgreSQL through plain SQL, inside the caller's transaction, so merged
 * state commits together with the log offset that produced it.
 */
export interface PgMergeStoreOptions {
  /**
   * Holds appended changes, synced heads and recorded conflicts until `flush` (or a load or
   * compaction of an entity that has some, or a read or resolution of conflicts), and writes
   * them in four multi-row statements instead of one statement each: for a caller that
   * applies a batch of changes in one transaction and flushes before it commits (the sync
   * stage), and before its own SQL reads or updates `merge_conflict`.
   */
  deferWrites?: boolean;
}

export class PgMergeStore implements MergeStore {
  private readonly deferWrites: boolean;
  private readonly newDocs = new Map<string, string>();
  private readonly changes: { entityId: string; seq: number; chunk: Uint8Array }[] = [];
  private readonly synced = new Map<string, { entityId: string; connectionId: string; state: SyncedState }>();
  private readonly conflicts: ConflictRecord[] = [];
  private readonly deferred = new Set<string>();

  constructor(
    private readonly tx: Queryable,
    options: PgMergeStoreOptions = {},
  ) {
    this.deferWrites = options.deferWrites === true;
  }

  /** Writes what `deferWrites` held back. A no-op without it, or with nothing held. */
  async flush(): Promise<void> {
    if (this.deferred.size === 0) return;
    const docs = [...this.newDocs];
    const changes = this.changes.splice(0);
    const synced = [...this.synced.values()];
    const conflicts = this.conflicts.splice(0);
    this.newDocs.clear();
    this.synced.clear();
    this.deferred.clear();
    if (docs.length > 0)
      await this.tx.query(
        `INSERT INTO entity_doc (entity_id, workspace_id, doc)
         SELECT e, w, '\\x'::bytea FROM unnest($1::uuid[], $2::uuid[]) AS t(e, w)
         ON CONFLICT (entity_id) DO NOTHING`,
        [docs.map(([e]) => e), docs.map(([, w]) => w)],
      );
    // The primary key refuses a second writer of the same seq: a stale cache fails loudly.
    if (changes.length > 0)
      await this.tx.query(
        `INSERT INTO entity_doc_change (entity_id, seq, chunk)
         SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bytea[])`,
        [changes.map((c) => c.entityId), changes.map((c) => c.seq), changes.map((c) => Buffer.from(c.chunk))],
      );
    if (synced.length > 0)
      await this.tx.query(
        `INSERT INTO entity_synced_heads (entity_id, connection_id, heads, stale)
         SELECT r.entity_id, r.connection_id, ARRAY(SELECT jsonb_array_elements_text(r.heads)), r.stale
           FROM jsonb_to_recordset($1::jsonb) AS r(entity_id uuid, connection_id uuid, heads jsonb, stale jsonb)
         ON CONFLICT (entity_id, connection_id) DO UPDATE
           SET heads = EXCLUDED.heads, stale = EXCLUDED.stale, updated_at = CURRENT_TIMESTAMP`,
        [
          JSON.stringify(
            synced.map((s) => ({
              entity_id: s.entityId,
              connection_id: s.connectionId,
              heads: s.state.heads,
              stale: s.state.stale,
            })),
          ),
        ],
      );
    await this.insertConflicts(conflicts);
  }

  async load(entityId: string): Promise<StoredDocument | null> {
    // One id asked, at most one document found (keyed as PostgreSQL spells the id).
    const [document] = (await this.loadMany([entityId])).values();
    return document ?? null;
  }

  async loadMany(entityIds: readonly string[]): Promise<Map<string, StoredDocument>> {
    const documents = new Map<string, StoredDocument>();
    if (entityIds.length === 0) return documents;
    if (entityIds.some((id) => this.deferred.has(id))) await this.flush();
    const ids = [...new Set(entityIds)];
    const docs = await this.tx.query<{
      entity_id: string;
      workspace_id: string;
      doc: Buffer;
      compacted_seq: string;
    }>(
      `SELECT entity_id::text, workspace_id, doc, compacted_seq FROM entity_doc WHERE entity_id = ANY($1::uuid[])`,
      [ids],
    );
    if (docs.rows.length === 0) return documents;
    const found = docs.rows.map((r) => r.entity_id);
    const changes = await this.tx.query<{ entity_id: string; seq: string; chunk: Buffer }>(
      `SELECT entity_id::text, seq, chunk FROM entity_doc_change WHERE entity_id = ANY($1::uuid[])
        ORDER BY entity_id, seq`,
      [found],
    );
    const synced = await this.tx.query<{
      entity_id: string;
      connection_id: string;
      heads: string[];
      stale: Record<string, string>;
    }>(
      `SELECT entity_id::text, connection_id, heads, stale FROM entity_synced_heads WHERE entity_id = ANY($1::uuid[])`,
      [found],
    );
    const chunksOf = new Map<string, { seq: string; chunk: Buffer }[]>();
    for (const c of changes.rows) {
      const list = chunksOf.get(c.entity_id);
      if (list) list.push(c);
      else chunksOf.set(c.entity_id, [c]);
    }
    const syncedOf = new Map<string, Map<string, SyncedState>>();
    for (const s of synced.rows) {
      const map = syncedOf.get(s.entity_id) ?? new Map<string, SyncedState>();
      map.set(s.connection_id, { heads: s.heads, stale: s.stale });
      syncedOf.set(s.entity_id, map);
    }
    for (const row of docs.rows) {
      const rows = chunksOf.get(row.entity_id) ?? [];
      const chunks = rows.map((c) => new Uint8Array(c.chunk));
      const last = rows.at(-1);
      documents.set(row.entity_id, {
        workspaceId: row.workspace_id,
        snapshot: row.doc.length > 0 ? new Uint8Array(row.doc) : null,
        chunks,
        lastSeq: Math.max(Number(row.compacted_seq), last === undefined ? 0 : Number(last.seq)),
        chunkBytes: chunks.reduce((n, c) => n + c.length, 0),
        synced: syncedOf.get(row.entity_id) ?? new Map(),
      });
    }
    return documents;
  }

  async appendChange(entityId: string, workspaceId: string, seq: number, chunk: Uint8Array): Promise<void> {
    if (this.deferWrites) {
      if (seq === 1) this.newDocs.set(entityId, workspaceId);
      this.changes.push({ entityId, seq, chunk });
      this.deferred.add(entityId);
      return;
    }
    if (seq === 1) {
      await this.tx.query(
        `INSERT INTO entity_doc (entity_id, workspace_id, doc) VALUES ($1, $2, '\\x'::bytea)
         ON CONFLICT (entity_id) DO NOTHING`,
        [entityId, workspaceId],
      );
    }
    // The primary key refuses a second writer of the same seq: a stale cache fails loudly.
    await this.tx.query(`INSERT INTO entity_doc_change (entity_id, seq, chunk) VALUES ($1, $2, $3)`, [
      entityId,
      seq,
      Buffer.from(chunk),
    ]);
  }

  async compact(
    entityId: string,
    workspaceId: string,
    snapshot: Uint8Array,
    throughSeq: number,
  ): Promise<void> {
    // The chunks it folds must be there to be dropped.
    await this.flush();
    await this.tx.query(
      `INSERT INTO entity_doc (entity_id, workspace_id, doc, doc_bytes, compacted_seq) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (entity_id) DO UPDATE
         SET doc = EXCLUDED.doc, doc_bytes = EXCLUDED.doc_bytes, compacted_seq = EXCLUDED.compacted_seq,
             updated_at = CURRENT_TIMESTAMP
         -- A process holding an older copy never replaces a newer snapshot (whose chunks are gone).
         WHERE entity_doc.compacted_seq <= EXCLUDED.compacted_seq`,
      [entityId, workspaceId, Buffer.from(snapshot), snapshot.length, throughSeq],
    );
    await this.tx.query(`DELETE FROM entity_doc_change WHERE entity_id = $1 AND seq <= $2`, [
      entityId,
      throughSeq,
    ]);
  }

  async saveSynced(entityId: string, connectionId: string, state: SyncedState): Promise<void> {
    if (this.deferWrites) {
      // The last state of a pair is the one that counts.
      const key = `${entityId}|${connectionId}`;
      this.synced.delete(key);
      this.synced.set(key, { entityId, connectionId, state });
      this.deferred.add(entityId);
      return;
    }
    await this.tx.query(
      `INSERT INTO entity_synced_heads (entity_id, connection_id, heads, stale) VALUES ($1, $2, $3, $4)
       ON CONFLICT (entity_id, connection_id) DO UPDATE
         SET heads = EXCLUDED.heads, stale = EXCLUDED.stale, updated_at = CURRENT_TIMESTAMP`,
      [entityId, connectionId, state.heads, JSON.stringify(state.stale)],
    );
  }

  async recordConflicts(conflicts: readonly ConflictRecord[]): Promise<void> {
    if (conflicts.length === 0) return;
    if (this.deferWrites) {
      this.conflicts.push(...conflicts);
      for (const c of conflicts) this.deferred.add(c.entityId);
      return;
    }
    await this.insertConflicts(conflicts);
  }

  /** Idempotent by id: the first of a repeated id stands, as when recorded one by one. */
  private async insertConflicts(conflicts: readonly ConflictRecord[]): Promise<void> {
    if (conflicts.length === 0) return;
    await this.tx.query(
      `INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates, status,
                                   resolution, resolved_by, created_at, resolved_at)
       SELECT c.id, c.workspace_id, c.entity_id, c.field, c.kind, c.policy, c.candidates,
              c.status::merge_conflict_status, c.resolution, c.resolved_by, c.created_at, c.resolved_at
         FROM jsonb_to_recordset($1::jsonb) AS c(id uuid, workspace_id uuid, entity_id uuid, field text,
              kind text, policy text, candidates jsonb, status text, resolution jsonb, resolved_by text,
              created_at timestamptz, resolved_at timestamptz)
       ON CONFLICT (id) DO NOTHING`,
      [
        JSON.stringify(
          conflicts.map((c) => ({
            id: c.id,
            workspace_id: c.workspaceId,
            entity_id: c.entityId,
            field: c.field,
            kind: c.kind,
            policy: c.policy,
            candidates: c.candidates,
            status: c.status,
            resolution: c.winner === undefined ? null : { winner: c.winner },
            resolved_by: c.status === 'resolved' ? `policy:${c.policy}` : null,
            created_at: c.detectedAt.toISOString(),
            resolved_at: c.status === 'resolved' ? c.detectedAt.toISOString() : null,
          })),
        ),
      ],
    );
  }

  async resolveConflict(conflictId: string, resolution: ConflictResolution): Promise<void> {
    if (this.conflicts.length > 0) await this.flush();
    const { rowCount } = await this.tx.query(
      `UPDATE merge_conflict SET status = 'resolved', resolution = $2, resolved_by = $3, resolved_at = $4
        WHERE id = $1`,
      [
        conflictId,
        JSON.stringify({
          value: resolution.value,
          userId: resolution.userId,
          at: resolution.at.toISOString(),
        }),
        resolution.userId,
        resolution.at,
      ],
    );
    if (rowCount === 0) throw new Error(`no conflict ${conflictId}`);
  }

  async listConflicts(entityId: string): Promise<StoredConflict[]> {
    if (this.conflicts.length > 0) await this.flush();
    const { rows } = await this.tx.query<ConflictRow>(
      `SELECT id, workspace_id, entity_id, field, kind, policy, candidates, status, resolution, created_at
         FROM merge_conflict WHERE entity_id = $1 ORDER BY created_at, id`,
      [entityId],
    );
    return rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      entityId: r.entity_id,
      field: r.field,
      kind: r.kind,
      policy: r.policy,
      candidates: r.candidates.map(toCandidate),
      ...(r.resolution?.winner === undefined ? {} : { winner: toCandidate(r.resolution.winner) }),
      status: r.status,
      detectedAt: r.created_at,
      ...(r.resolution?.userId === undefined
        ? {}
        : {
            resolution: {
              value: r.resolution.value,
              userId: r.resolution.userId,
              at: new Date(r.resolution.at ?? r.created_at),
            },
          }),
    }));
  }

  /** The set in force: the last `policy` event folded for the type (policy-event.ts); {} before one. */
  async policies(workspaceId: string, entityType: string): Promise<PolicyMap> {
    const { rows } = await this.tx.query<{ policies: Record<string, { kind: string; order?: string[] }> }>(
      'SELECT policies FROM policy_in_force WHERE workspace_id = $1 AND entity_type = $2',
      [workspaceId, entityType],
    );
    const policies: Record<string, FieldPolicy> = {};
    for (const [field, policy] of Object.entries(rows[0]?.policies ?? {})) {
      if (!(POLICY_KINDS as readonly string[]).includes(policy.kind))
        throw new Error(`unknown policy ${policy.kind}`);
      const kind = policy.kind as PolicyKind;
      policies[field] = kind === 'priority' ? { kind, order: policy.order ?? [] } : ({ kind } as FieldPolicy);
    }
    return policies;
  }

  /** Puts a type's whole set in force (the fold of a `policy` event). */
  async replacePolicies(
    workspaceId: string,
    entityType: string,
    policies: PolicyMap,
    version: number,
  ): Promise<void> {
    await this.tx.query(
      `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, entity_type) DO UPDATE SET policies = EXCLUDED.policies, version = EXCLUDED.version`,
      [workspaceId, entityType, JSON.stringify(policies), version],
    );
  }

  /** One field's policy put in force at once, outside the log: for tests of the merge alone. */
  async setPolicy(
    workspaceId: string,
    entityType: string,
    field: string,
    policy: FieldPolicy,
  ): Promise<void> {
    await this.tx.query(
      `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
       VALUES ($1, $2, jsonb_build_object($3::text, $4::jsonb), 0)
       ON CONFLICT (workspace_id, entity_type) DO UPDATE
         SET policies = policy_in_force.policies || EXCLUDED.policies`,
      [workspaceId, entityType, field, JSON.stringify(policy)],
    );
  }
}
