import { Inject, Injectable } from '@nestjs/common';
import type { EntityType, WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import DataLoader from 'dataloader';
import { Pool } from 'pg';
import { READ_POOL } from '../infra/database.module';
import type { LinkedBecause, ListCursor, ListSort, Trend } from './records.schemas';

/** An entity row of the merged view with its links and open conflicts. */
export interface EntityRecord {
  id: string;
  entityType: EntityType;
  displayName: string | null;
  fields: Prisma.JsonValue;
  provenance: Prisma.JsonValue;
  version: bigint;
  mergedInto: string | null;
  flags: Prisma.JsonValue;
  updatedAt: Date;
  /** The name as a list sorted by name compares it (lists only). */
  nameKey?: string;
  /** The last contact as a list sorted by it compares it (lists only). */
  contactedAt?: Date | null;
  /** Its activity insights at a glance (entity_insight); null for types without insights. */
  insights: RecordInsightSummary | null;
  sourceLinks: {
    connectionId: string;
    provider: string | null;
    externalId: string;
    /** The connection's account (HubSpot's portal id, Google's address); null once it was removed. */
    account: string | null;
    linkedBecause: LinkedBecause | null;
  }[];
  /** The people, companies and deals associated with it, one per entity with every source. */
  associations: {
    id: string;
    type: EntityType;
    displayName: string | null;
    sources: {
      kind: 'connection' | 'derived';
      connectionId: string | null;
      provider: string | null;
      evidence: Prisma.JsonValue;
    }[];
  }[];
  openConflicts: {
    id: string;
    field: string;
    kind: string;
    policy: string;
    candidates: Prisma.JsonValue;
    createdAt: Date;
  }[];
  /** The systems that deleted their record of it (`flags.deletedIn`), with their connection's name. */
  deletedIn: {
    connectionId: string;
    name: string | null;
    provider: string | null;
    at: string;
  }[];
}

export interface RecordInsightSummary {
  lastContactedAt: Date | null;
  lastContactedVia: 'mail_in' | 'mail_out' | 'meeting' | null;
  nextMeetingAt: Date | null;
  trend: Trend;
}

/** The types the sync stage keeps insights of: a record of one without a row was never contacted. */
const INSIGHT_TYPES: ReadonlySet<EntityType> = new Set<EntityType>(['person', 'company', 'deal']);

export interface EntityFilter {
  /** Lower-cased; matches `email` or an element of `emails`. */
  email?: string | undefined;
  /** Lower-cased; matches `domain`. */
  domain?: string | undefined;
  /** Lower-cased text to find in the name, email or domain. */
  text?: string | undefined;
  /** `ownerId` equals this. */
  owner?: string | undefined;
  /** This field of the view (e.g. `stage`) equals `stage.value`. */
  stage?: { field: string; value: string } | undefined;
  /** Only rows whose view changed at or after this time. */
  updatedSince?: Date | undefined;
  /** Only records of this activity trend; `cold` takes in those without insights. */
  trend?: Trend | undefined;
  sort: ListSort;
  /** Rows after this one in the sort order (keyset paging). */
  after?: ListCursor | undefined;
  limit: number;
}

/** The text a search matches, written exactly as the trigram index `entity_search_trgm_idx` is. */
const SEARCH_TEXT = `lower(coalesce(display_name, '') || ' ' || coalesce(fields->>'email', '') || ' ' || coalesce(fields->>'domain', ''))`;
/** The search text's words, written exactly as the index `entity_search_words_idx` is. */
const SEARCH_WORDS = `array_to_tsvector(array_remove(regexp_split_to_array(${SEARCH_TEXT}, '[^[:alnum:]]+'), ''))`;
/** The name order, written as the index `entity_name_lower_idx` is. */
const NAME_KEY = `lower(coalesce(display_name, ''))`;

/**
 * Words that every record containing `text` has as the start of one of its own words: the
 * runs of ASCII letters and digits that follow an ASCII character other than those (the
 * first run may begin inside a word of the record, so it is not among them). Whatever the
 * database's locale counts as a letter, such a character separates words in the index, and
 * such a run is letters there too, so the test finds every record the substring test does.
 */
export function searchWords(text: string): string[] {
  return [...new Set(text.match(/(?<=[^\P{ASCII}a-zA-Z0-9])[a-z0-9]+/gu) ?? [])];
}

/** `%`, `_` and `\` in a searched text are literal. */
const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

interface EntityRow {
  id: string;
  entity_type: EntityType;
  display_name: string | null;
  fields: Prisma.JsonValue;
  provenance: Prisma.JsonValue;
  /** int8 as text, as `pg` reads it. */
  version: string;
  merged_into: string | null;
  flags: Prisma.JsonValue;
  updated_at: Date;
  /** entity_insight's columns; null without a row. */
  contacted_at: Date | null;
  contacted_via: RecordInsightSummary['lastContactedVia'];
  next_meeting_at: Date | null;
  trend: Trend | null;
}

export interface ConflictCursor {
  createdAt: string;
  id: string;
}

/** A merge_conflict row with its record's type. */
export interface ConflictRow {
  id: string;
  entity_id: string;
  entity_type: EntityType;
  field: string;
  kind: string;
  policy: string;
  status: 'open' | 'resolved';
  candidates: Prisma.JsonValue;
  resolution: Prisma.JsonValue;
  created_at: Date;
  resolved_at: Date | null;
}

const CONFLICT_COLUMNS = Prisma.sql`c.id::text, c.entity_id::text, e.entity_type, c.field, c.kind, c.policy,
  c.status::text AS status, c.candidates, c.resolution, c.created_at, c.resolved_at`;

const COLUMNS = `entity.id::text, entity.entity_type, entity.display_name, entity.fields, entity.provenance,
  entity.version::text AS version, entity.merged_into::text, entity.flags, entity.updated_at`;

/**
 * A record's insights at a glance, from the row the sync stage keeps (joined as \`insight\`).
 * The next meeting was the next one when the row was written: once it has started it is not
 * ahead any more, and the row says nothing of the one after it.
 */
const INSIGHT_COLUMNS = `insight.last_contacted_at AS contacted_at, insight.last_contacted_via AS contacted_via,
  CASE WHEN insight.next_meeting_at > now() THEN insight.next_meeting_at END AS next_meeting_at,
  insight.trend`;

/**
 * A record's associations (entity_relation, written by the sync stage): the rows of the record
 * and of every record merged into it, at either end, each far end followed to its survivor;
 * one entry per associated entity, with every source that says it (connections, or "derived"
 * with its evidence). CRM rows whose associated record is not known yet are left out.
 */
const RELATED = `
  COALESCE((SELECT json_agg(json_build_object('id', g.id, 'type', g.entity_type, 'displayName', g.display_name,
                                              'sources', g.sources)
                            ORDER BY g.entity_type, g.id)
              FROM (SELECT o.id, o.entity_type, o.display_name,
                           jsonb_agg(DISTINCT jsonb_build_object(
                             'kind', CASE WHEN r.kind = 'derived' THEN 'derived' ELSE 'connection' END,
                             'connectionId', r.connection_id, 'provider', c.provider, 'evidence', r.evidence)) AS sources
                      FROM (SELECT r.kind, r.connection_id, r.evidence, r.workspace_id, r.to_id AS other
                              FROM entity_relation r
                             WHERE r.workspace_id = entity.workspace_id AND r.from_id IN (
                                   SELECT entity.id UNION ALL SELECT x.id FROM entity x WHERE x.merged_into = entity.id)
                            UNION ALL
                            SELECT r.kind, r.connection_id, r.evidence, r.workspace_id, r.from_id
                              FROM entity_relation r
                             WHERE r.workspace_id = entity.workspace_id AND r.to_id IN (
                                   SELECT entity.id UNION ALL SELECT x.id FROM entity x WHERE x.merged_into = entity.id)) r
                      JOIN entity o0 ON o0.id = r.other
                      JOIN entity o ON o.id = COALESCE(o0.merged_into, o0.id) AND o.workspace_id = entity.workspace_id
                                   AND o.id <> entity.id
                      LEFT JOIN connection c ON c.id = r.connection_id AND c.workspace_id = r.workspace_id
                     GROUP BY o.id, o.entity_type, o.display_name) g), '[]') AS related`;

/**
 * A record's links and open conflicts, read in the statement that reads the record: one round
 * trip per request instead of three (the get by id is the API's hottest read; see bench api-read).
 */
const RELATIONS = `
  COALESCE((SELECT json_agg(json_build_object('connectionId', l.connection_id, 'provider', c.provider,
                                              'externalId', l.external_id, 'account', c.external_account_id,
                                              'linkedBecause', l.link_reason)
                            ORDER BY l.created_at, l.connection_id, l.external_id)
              FROM source_link l
              LEFT JOIN connection c ON c.id = l.connection_id AND c.workspace_id = l.workspace_id
             WHERE l.entity_id = entity.id AND l.workspace_id = entity.workspace_id), '[]') AS links,
  COALESCE((SELECT json_agg(json_build_object('id', m.id, 'field', m.field, 'kind', m.kind, 'policy', m.policy,
                                              'candidates', m.candidates, 'createdAt', m.created_at)
                            ORDER BY m.created_at, m.id)
              FROM merge_conflict m
             WHERE m.entity_id = entity.id AND m.workspace_id = entity.workspace_id AND m.status = 'open'),
           '[]') AS conflicts,
  -- Only a record some system deleted pays for the names of the connections.
  CASE WHEN jsonb_typeof(entity.flags->'deletedIn') = 'array' AND entity.flags->'deletedIn' <> '[]'::jsonb
       THEN COALESCE((SELECT json_agg(json_build_object('connectionId', d.connection_id,
                                                        'name', COALESCE(c.display_name, c.external_account_id),
                                                        'provider', c.provider, 'at', d.at)
                                      ORDER BY d.at, d.connection_id)
                        FROM (SELECT DISTINCT x->>'connectionId' AS connection_id, x->>'at' AS at
                                FROM jsonb_array_elements(entity.flags->'deletedIn') AS x) d
                        LEFT JOIN connection c ON c.id::text = d.connection_id
                                              AND c.workspace_id = entity.workspace_id), '[]')
       ELSE '[]'::json
  END AS deleted,
  ${RELATED}`;

/** Records of one workspace by id, with their relations and insights: a list's page, or a batch of gets. */
const ROWS_SQL = `SELECT ${COLUMNS}, ${INSIGHT_COLUMNS}, ${RELATIONS} FROM entity
  LEFT JOIN entity_insight insight ON insight.entity_id = entity.id AND insight.workspace_id = entity.workspace_id
  WHERE entity.id = ANY($1::uuid[]) AND entity.workspace_id = $2::uuid`;

/** One get: a record's id in a workspace, and the type it was asked as. */
interface FindKey {
  workspaceId: WorkspaceId;
  entityType: EntityType;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The most gets one statement reads (the rest wait for the next). */
const FIND_BATCH = 100;

/** One list's page query: its text, with its own `$1…$n`, and their values. */
interface PageQuery {
  text: string;
  values: unknown[];
}

/** A page's row: its id and its sort values (the last contact only under `-lastContacted`). */
type PageRow = { id: string; name_key: string; contacted_at: Date | null };

/** The most page queries one statement runs side by side. */
const PAGE_BATCH = 16;

interface RelationColumns {
  links: EntityRecord['sourceLinks'];
  related: EntityRecord['associations'];
  conflicts: (Omit<EntityRecord['openConflicts'][number], 'createdAt'> & { createdAt: string })[];
  deleted: EntityRecord['deletedIn'];
}

@Injectable()
export class RecordsRepository {
  /**
   * Gets by id, gathered: the gets that reach the repository in one turn of the event loop
   * are read by one statement per workspace instead of one each. Under load a turn brings
   * tens of them, and a round trip to PostgreSQL (its write, its wakeup, its parse) is most
   * of what a get costs the API (bench api-read); alone, a get waits for nothing but the end
   * of the turn it came in. Nothing is kept between batches: every get reads the database.
   */
  private readonly finder = new DataLoader<FindKey, EntityRecord | null, FindKey>(
    (keys) => this.findBatch(keys),
    { cache: false, maxBatchSize: FIND_BATCH, batchScheduleFn: (callback) => setImmediate(callback) },
  );

  /**
   * Lists' page queries, gathered as gets are: the pages asked in one turn are read by one
   * statement, each query a branch of a UNION ALL planned for its own values (an unnamed
   * statement is planned with them). Should the statement fail, each query runs alone, so
   * that one bad query fails only its own list.
   */
  private readonly pager = new DataLoader<PageQuery, PageRow[], PageQuery>(
    (queries) => this.pageBatch(queries),
    { cache: false, maxBatchSize: PAGE_BATCH, batchScheduleFn: (callback) => setImmediate(callback) },
  );

  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(READ_POOL) private readonly pool: Pool,
  ) {}

  private async pageBatch(queries: readonly PageQuery[]): Promise<(PageRow[] | Error)[]> {
    if (queries.length === 1) return [await this.page(queries[0]!)];
    const values: unknown[] = [];
    const branches = queries.map((query, index) => {
      const offset = values.length;
      values.push(...query.values);
      // The placeholders are the only `$` in a page query (every value is a parameter).
      const text = query.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
      // row_number over the branch's ordered rows keeps its order through the union.
      return `SELECT ${index} AS branch, row_number() OVER () AS position, page.* FROM (${text}) AS page`;
    });
    try {
      const { rows } = await this.pool.query<PageRow & { branch: number; position: string }>(
        `${branches.map((b) => `(${b})`).join('\nUNION ALL\n')}\nORDER BY branch, position`,
        values,
      );
      const pages: PageRow[][] = queries.map(() => []);
      for (const { branch, position: _, ...row } of rows) pages[branch]!.push(row);
      return pages;
    } catch {
      return Promise.all(queries.map((query) => this.page(query).catch((error: Error) => error)));
    }
  }

  private async page(query: PageQuery): Promise<PageRow[]> {
    return (await this.pool.query<PageRow>(query.text, query.values)).rows;
  }

  /**
   * A page of one type's live records (merged-away ones left out) in the asked order, with
   * keyset paging. Every condition is written as its index is (`lower(fields->>'email')`,
   * the search text, the owner), so each filter can use one; `emails` holds the further
   * addresses of a person.
   */
  async list(
    workspaceId: WorkspaceId,
    entityType: EntityType,
    filter: EntityFilter,
  ): Promise<EntityRecord[]> {
    const params: unknown[] = [];
    const p = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const workspace = p(workspaceId);
    const type = p(entityType);
    // Qualified: the last-contacted order joins entity_insight, which has these columns too.
    const conditions = [
      `entity.workspace_id = ${workspace}::uuid`,
      `entity.entity_type = ${type}`,
      'entity.merged_into IS NULL',
    ];
    if (filter.email !== undefined) {
      const email = p(filter.email);
      conditions.push(`(lower(fields->>'email') = ${email}
        OR (jsonb_typeof(fields->'emails') = 'array'
            AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(fields->'emails') AS e(address)
                         WHERE lower(e.address) = ${email})))`);
    }
    if (filter.domain !== undefined) conditions.push(`lower(fields->>'domain') = ${p(filter.domain)}`);
    if (filter.text !== undefined) {
      // The words narrow the candidates (an index of words, far more selective than trigrams
      // for a text of several), the substring test decides.
      const words = searchWords(filter.text);
      if (words.length > 0)
        conditions.push(`${SEARCH_WORDS} @@ ${p(words.map((w) => `${w}:*`).join(' & '))}::tsquery`);
      conditions.push(`${SEARCH_TEXT} LIKE ${p(`%${likeEscape(filter.text)}%`)}`);
    }
    if (filter.owner !== undefined) conditions.push(`(fields->>'ownerId') = ${p(filter.owner)}`);
    if (filter.stage !== undefined)
      conditions.push(`(fields->>${p(filter.stage.field)}) = ${p(filter.stage.value)}`);
    if (filter.updatedSince !== undefined)
      conditions.push(`updated_at >= ${p(filter.updatedSince)}::timestamptz`);
    // A record without an insight row was never contacted: cold. The trend index finds the others.
    if (filter.trend === 'cold')
      conditions.push(`NOT EXISTS (SELECT 1 FROM entity_insight t
        WHERE t.entity_id = entity.id AND t.workspace_id = entity.workspace_id AND t.trend <> 'cold')`);
    else if (filter.trend !== undefined)
      conditions.push(`EXISTS (SELECT 1 FROM entity_insight t
        WHERE t.entity_id = entity.id AND t.workspace_id = entity.workspace_id AND t.trend = ${p(filter.trend)})`);
    const after = filter.after;
    // The id in the order is the table's (a uuid, as the indexes and the keyset conditions
    // have it), not the page's `id::text` column, which a bare `id` would name: sorted as
    // text, a name-ordered list could not use its index (measured on a broad search: an
    // incremental sort over 1,000 rows of one name, 493 ms instead of 101 ms).
    let order = '';
    let text: string | undefined;
    switch (filter.sort) {
      case 'id':
        order = 'entity.id';
        if (after !== undefined) conditions.push(`id > ${p(after.id)}::uuid`);
        break;
      case 'updatedAt':
        order = 'updated_at, entity.id';
        if (after !== undefined)
          conditions.push(`(updated_at, id) > (${p(after.value)}::timestamptz, ${p(after.id)}::uuid)`);
        break;
      case '-updatedAt':
        order = 'updated_at DESC, entity.id DESC';
        if (after !== undefined)
          conditions.push(`(updated_at, id) < (${p(after.value)}::timestamptz, ${p(after.id)}::uuid)`);
        break;
      case 'name':
        order = `${NAME_KEY}, entity.id`;
        if (after !== undefined)
          conditions.push(`(${NAME_KEY}, id) > (${p(after.value ?? '')}, ${p(after.id)}::uuid)`);
        break;
      case '-lastContacted':
        text = lastContactedPage(conditions.join(' AND '), { workspace, type }, after, p, filter.limit);
        break;
    }
    // Two statements: the page's ids, planned for its filters, then its rows with their
    // relations by one prepared statement (shared with the gets of the same turn). Planning
    // the relations' subqueries anew for every list cost twice what running them did
    // (measured on bench api-read's search: 4.2 ms of planning for 2.3 ms of execution);
    // prepared, they are planned once per connection.
    // The name key comes from PostgreSQL: its lower() (under the database's collation) is what
    // the next page compares with, which JavaScript's toLowerCase need not match.
    const page = await this.pager.load({
      text:
        text ??
        `SELECT id::text, ${NAME_KEY} AS name_key, NULL::timestamptz AS contacted_at FROM entity
        WHERE ${conditions.join(' AND ')}
        ORDER BY ${order}
        LIMIT ${p(filter.limit)}`,
      values: params,
    });
    if (page.length === 0) return [];
    // The page's rows are read as gets are, in the batch of the turn (see `finder`).
    const rows = await Promise.all(page.map(({ id }) => this.find(workspaceId, entityType, id)));
    const records: EntityRecord[] = [];
    for (const [index, { name_key, contacted_at }] of page.entries()) {
      const row = rows[index];
      // A row deleted between the two reads (its connection erased) is left out, as a read a
      // moment later would have.
      if (row) records.push({ ...row, nameKey: name_key, contactedAt: contacted_at });
    }
    return records;
  }

  /** One record of this type in this workspace, merged or not; null otherwise. */
  find(workspaceId: WorkspaceId, entityType: EntityType, id: string): Promise<EntityRecord | null> {
    return this.finder.load({ workspaceId, entityType, id });
  }

  /**
   * A batch of gets: one prepared statement per workspace among them, answered in order.
   * Should one workspace's statement fail, only its gets fail.
   */
  private async findBatch(keys: readonly FindKey[]): Promise<(EntityRecord | null | Error)[]> {
    const byWorkspace = new Map<WorkspaceId, string[]>();
    for (const key of keys) {
      // An id PostgreSQL cannot read as a uuid would fail the whole statement, and so every
      // other get of the batch: it is simply not there.
      if (!UUID.test(key.id)) continue;
      const id = key.id.toLowerCase();
      const ids = byWorkspace.get(key.workspaceId);
      if (ids === undefined) byWorkspace.set(key.workspaceId, [id]);
      else if (!ids.includes(id)) ids.push(id);
    }
    const found = new Map<string, EntityRow & RelationColumns>();
    const failed = new Map<WorkspaceId, Error>();
    await Promise.all(
      [...byWorkspace].map(async ([workspaceId, ids]) => {
        try {
          // A named statement: prepared once per connection, so PostgreSQL plans it once
          // instead of on every batch (planning it costs several times executing it).
          const { rows } = await this.pool.query<EntityRow & RelationColumns>({
            name: 'records.rows',
            text: ROWS_SQL,
            values: [ids, workspaceId],
          });
          for (const row of rows) found.set(`${workspaceId}/${row.id}`, row);
        } catch (error) {
          failed.set(workspaceId, error instanceof Error ? error : new Error(String(error)));
        }
      }),
    );
    return keys.map((key) => {
      const failure = failed.get(key.workspaceId);
      if (failure !== undefined) return failure;
      // PostgreSQL writes a uuid in lower case, whichever case it was asked in.
      const row = found.get(`${key.workspaceId}/${key.id.toLowerCase()}`);
      // Asked as another type, a record is not there.
      return row !== undefined && row.entity_type === key.entityType ? toRecord(row) : null;
    });
  }

  /**
   * The record a read of this id leads to: the record itself, or the one it was merged into
   * (followed through later merges); null when the workspace has no such record of this type.
   */
  async survivorOf(workspaceId: WorkspaceId, entityType: EntityType, id: string): Promise<string | null> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH RECURSIVE chain AS (
        SELECT id, merged_into, 0 AS depth FROM entity
         WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND entity_type = ${entityType}
        UNION ALL
        SELECT e.id, e.merged_into, c.depth + 1 FROM entity e JOIN chain c ON e.id = c.merged_into
         WHERE c.depth < 64 AND e.workspace_id = ${workspaceId}::uuid
      )
      SELECT id::text FROM chain ORDER BY depth DESC LIMIT 1`;
    return rows[0]?.id ?? null;
  }

  /**
   * The id a read of a record's own routes (timeline, insights) answers for: the record, or the
   * one it was merged into; null when the workspace has no such record of this type.
   */
  async readableId(workspaceId: WorkspaceId, entityType: EntityType, id: string): Promise<string | null> {
    const asked = await this.find(workspaceId, entityType, id);
    if (asked === null) return null;
    return asked.mergedInto === null ? asked.id : this.survivorOf(workspaceId, entityType, id);
  }

  /** A page of the workspace's conflicts, newest first (keyset on created_at, id). */
  async conflicts(
    workspaceId: WorkspaceId,
    filter: {
      status: 'open' | 'resolved';
      recordId?: string | undefined;
      after?: ConflictCursor;
      limit: number;
    },
  ): Promise<ConflictRow[]> {
    const conditions = [
      Prisma.sql`c.workspace_id = ${workspaceId}::uuid`,
      Prisma.sql`c.status = ${filter.status}::merge_conflict_status`,
    ];
    if (filter.recordId !== undefined) conditions.push(Prisma.sql`c.entity_id = ${filter.recordId}::uuid`);
    if (filter.after !== undefined)
      conditions.push(
        Prisma.sql`(c.created_at, c.id) < (${filter.after.createdAt}::timestamptz, ${filter.after.id}::uuid)`,
      );
    return this.prisma.$queryRaw<ConflictRow[]>`
      SELECT ${CONFLICT_COLUMNS}
        FROM merge_conflict c JOIN entity e ON e.id = c.entity_id AND e.workspace_id = c.workspace_id
       WHERE ${Prisma.join(conditions, ' AND ')}
       ORDER BY c.created_at DESC, c.id DESC
       LIMIT ${filter.limit}`;
  }

  /** One conflict of this workspace; null otherwise. */
  async conflict(workspaceId: WorkspaceId, id: string): Promise<ConflictRow | null> {
    const rows = await this.prisma.$queryRaw<ConflictRow[]>`
      SELECT ${CONFLICT_COLUMNS}
        FROM merge_conflict c JOIN entity e ON e.id = c.entity_id AND e.workspace_id = c.workspace_id
       WHERE c.id = ${id}::uuid AND c.workspace_id = ${workspaceId}::uuid`;
    return rows[0] ?? null;
  }
}

/**
 * A page in last-contacted order: the contacted records, latest first (ties by id, latest
 * first: the index `entity_insight_contacted_idx` read backwards, with its keyset), then those
 * never contacted (no row, or no time in it) by id. Each part stops at a page, so the first
 * never sorts the workspace's contacts; a cursor in the second part skips the first.
 * `conditions` speak of `entity` (the list's filters, the workspace's among them).
 */
function lastContactedPage(
  conditions: string,
  { workspace, type }: { workspace: string; type: string },
  after: ListCursor | undefined,
  p: (value: unknown) => string,
  limit: number,
): string {
  const size = p(limit);
  const parts: string[] = [];
  if (after?.value !== null) {
    const keyset =
      after === undefined
        ? ''
        : `AND (insight.last_contacted_at, insight.entity_id) < (${p(after.value)}::timestamptz, ${p(after.id)}::uuid)`;
    parts.push(`(SELECT entity.id AS uid, 0 AS part, ${NAME_KEY} AS name_key, insight.last_contacted_at AS contacted_at
        FROM entity_insight insight JOIN entity ON entity.id = insight.entity_id
       WHERE insight.workspace_id = ${workspace}::uuid AND insight.entity_type = ${type}
         AND insight.last_contacted_at IS NOT NULL ${keyset} AND ${conditions}
       ORDER BY insight.last_contacted_at DESC, insight.entity_id DESC
       LIMIT ${size})`);
  }
  const idAfter = after?.value === null ? `AND entity.id > ${p(after.id)}::uuid` : '';
  parts.push(`(SELECT entity.id AS uid, 1 AS part, ${NAME_KEY} AS name_key, NULL::timestamptz AS contacted_at
      FROM entity
     WHERE ${conditions} ${idAfter}
       AND NOT EXISTS (SELECT 1 FROM entity_insight c
                        WHERE c.entity_id = entity.id AND c.workspace_id = entity.workspace_id
                          AND c.last_contacted_at IS NOT NULL)
     ORDER BY entity.id
     LIMIT ${size})`);
  return `SELECT uid::text AS id, name_key, contacted_at FROM (${parts.join(' UNION ALL ')}) AS ranked
    ORDER BY part, contacted_at DESC, CASE WHEN part = 0 THEN uid END DESC, uid
    LIMIT ${size}`;
}

function toRecord(row: EntityRow & RelationColumns): EntityRecord {
  return {
    id: row.id,
    entityType: row.entity_type,
    displayName: row.display_name,
    fields: row.fields,
    provenance: row.provenance,
    version: BigInt(row.version),
    mergedInto: row.merged_into,
    flags: row.flags,
    updatedAt: row.updated_at,
    sourceLinks: row.links,
    associations: row.related,
    openConflicts: row.conflicts.map((c) => ({ ...c, createdAt: new Date(c.createdAt) })),
    deletedIn: row.deleted,
    insights: INSIGHT_TYPES.has(row.entity_type)
      ? {
          lastContactedAt: row.contacted_at,
          lastContactedVia: row.contacted_via,
          nextMeetingAt: row.next_meeting_at,
          trend: row.trend ?? 'cold',
        }
      : null,
  };
}
