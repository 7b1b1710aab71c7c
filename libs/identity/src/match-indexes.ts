import type { EntityType, Queryable } from '@syncline/core';
import { MatchIndex } from './match-index';
import { CROSS_CONNECTION_KINDS, decodeKey, FACT_KINDS, kindOf } from './match-record';

interface StoredMatchData {
  names?: string[];
  blocks?: string[];
}

interface EntityRow {
  id: string;
  merged_into: string | null;
  match_keys: StoredMatchData;
}

/**
 * Identity's cache: a `MatchIndex` per workspace and entity type, built from `entity` and
 * `match_key` on first use and kept in step as records are linked. Deterministic keys are read
 * from the database again before every decision (`refresh`), so entities other processes made
 * are found.
 */
export class MatchIndexes {
  private readonly cache = new Map<string, MatchIndex>();

  /** The index of a workspace's entities of one type, if built. */
  cached(workspaceId: string, entityType: string): MatchIndex | undefined {
    return this.cache.get(`${workspaceId}:${entityType}`);
  }

  forget(): void {
    this.cache.clear();
  }

  async of(tx: Queryable, workspaceId: string, entityType: EntityType): Promise<MatchIndex> {
    const cacheKey = `${workspaceId}:${entityType}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const index = new MatchIndex();
    const entities = await tx.query<EntityRow>(
      'SELECT id, merged_into, match_keys FROM entity WHERE workspace_id = $1 AND entity_type = $2',
      [workspaceId, entityType],
    );
    for (const row of entities.rows) addStored(index, entityType, row);
    for (const row of entities.rows) if (row.merged_into) index.merge(row.id, row.merged_into);
    const keys = await tx.query<{ kind: string; value: string; entity_id: string }>(
      'SELECT kind, value, entity_id FROM match_key WHERE workspace_id = $1 AND entity_type = $2',
      [workspaceId, entityType],
    );
    const holders = new Map<string, string[]>();
    for (const row of keys.rows) {
      const key = `${row.kind}:${row.value}`;
      const list = holders.get(key);
      if (list) list.push(row.entity_id);
      else holders.set(key, [row.entity_id]);
    }
    for (const [key, ids] of holders) index.setKey(key, ids);
    this.cache.set(cacheKey, index);
    return index;
  }

  /** Makes the index agree with the database on who holds these keys and where they merged. */
  async refresh(
    tx: Queryable,
    workspaceId: string,
    entityType: EntityType,
    keys: readonly string[],
    index: MatchIndex,
  ): Promise<void> {
    const decoded = keys.map(decodeKey);
    const { rows } = await tx.query<EntityRow & { kind: string; value: string }>(
      `SELECT mk.kind, mk.value, e.id, e.merged_into, e.match_keys
         FROM match_key mk JOIN entity e ON e.id = mk.entity_id
        WHERE mk.workspace_id = $1 AND mk.entity_type = $2
          AND (mk.kind, mk.value) IN (SELECT * FROM unnest($3::text[], $4::text[]))`,
      [workspaceId, entityType, decoded.map((k) => k.kind), decoded.map((k) => k.value)],
    );
    const holders = new Map<string, string[]>(keys.map((k) => [k, []]));
    let pending: EntityRow[] = [];
    for (const row of rows) {
      holders.get(`${row.kind}:${row.value}`)?.push(row.id);
      pending.push(row);
    }
    for (const [key, ids] of holders) index.setKey(key, ids);
    // Follow merges to their survivors, learning entities other processes made on the way.
    const seen = new Set<string>();
    while (pending.length > 0) {
      const next: string[] = [];
      for (const row of pending) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        if (!index.has(row.id)) addStored(index, entityType, row);
        if (row.merged_into) {
          index.merge(row.id, row.merged_into);
          if (!seen.has(row.merged_into)) next.push(row.merged_into);
        } else index.unmerge(row.id);
      }
      if (next.length === 0) break;
      pending = (
        await tx.query<EntityRow>(
          'SELECT id, merged_into, match_keys FROM entity WHERE id = ANY($1::uuid[])',
          [next],
        )
      ).rows;
    }
    // A cross-connection key is checked against the holders' connections and facts: read them
    // as they stand, since other processes may have added links and keys since the cache was built.
    if (seen.size > 0 && keys.some((k) => CROSS_CONNECTION_KINDS.has(kindOf(k)))) {
      const ids = [...seen];
      const links = await tx.query<{ entity_id: string; connections: string[] }>(
        `SELECT entity_id, array_agg(DISTINCT connection_id::text) AS connections
           FROM source_link WHERE entity_id = ANY($1::uuid[]) GROUP BY entity_id`,
        [ids],
      );
      // As they stand: links an unmerge gave back, or a deleted record took, are gone from here too.
      const connections = new Map<string, string[]>(ids.map((id) => [id, []]));
      for (const row of links.rows) connections.set(row.entity_id, row.connections);
      for (const [id, list] of connections) index.setConnections(index.handle(id), list);
      const facts = await tx.query<{ kind: string; value: string; entity_id: string }>(
        `SELECT kind, value, entity_id FROM match_key
          WHERE entity_id = ANY($1::uuid[]) AND kind = ANY($2::text[])`,
        [ids, [...FACT_KINDS]],
      );
      for (const row of facts.rows) index.addKey(`${row.kind}:${row.value}`, index.handle(row.entity_id));
    }
  }
}

function addStored(index: MatchIndex, entityType: EntityType, row: EntityRow): void {
  const names = row.match_keys?.names ?? [];
  const blocks = row.match_keys?.blocks ?? [];
  index.add(row.id, { entityType, keys: [], blocks, name: names[0] ?? '', displayName: undefined });
  const handle = index.handle(row.id);
  for (const name of names.slice(1)) index.addName(handle, name);
}
