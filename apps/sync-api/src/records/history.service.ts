import { HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import {
  type EntityReader,
  type HistoryEntry,
  PgMergeStore,
  type PolicyMap,
  readEntity,
} from '@syncline/conflicts';
import type { EntityType, Queryable, WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import { mergeReasonOf } from '@syncline/identity';
import type { Principal } from '../auth/principal';
import { CodedHttpException, ValidationFailedException } from '../common/api-errors';
import {
  type AsOfView,
  encodeHistoryCursor,
  type HistoryEntryView,
  type HistoryPage,
  type HistoryQuery,
  type IdentityEventView,
} from './history.schemas';

type LinkReasonRow = { rule: string; evidence: string[]; score: number } | null;

import { ActorLabels } from '../auth/actor-labels';
import { labelProvenance, sourcesOf } from './provenance-labels';
import { RECORD_RESOURCES, type RecordResource } from './records.schemas';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A conflict settled in the inbox is an edit whose idempotency key names the conflict
 * (RecordsService.resolve: `resolve-<id>`); the sync stage stores it as the change's event
 * key `<own connection>:edit:<actor>:resolve-<id>`, the actor `member:<id>` or an API key's id.
 */
const RESOLUTION_KEY = /:edit:(?:member:)?[^:]+:resolve-([0-9a-f-]{36})$/i;

/**
 * A record's past, read from its entity document (libs/conflicts), not from the change log.
 * The document holds exactly the changes that altered the merged record, each under the
 * actor of its real origin: the connection, or the API key of a person's edit (on the log
 * an edit is a change of the workspace's own `syncline` connection), and it lives as long as
 * the record, while the log drops events past retention and also carries echoes, reports
 * that changed nothing and records not linked yet. Source links say which systems hold the
 * record now, not who set what. Connections and API keys only name the origins; a resolution
 * is confirmed against its merge_conflict row.
 */
@Injectable()
export class RecordHistoryService {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
  ) {}

  async history(
    principal: Principal,
    resource: RecordResource,
    id: string,
    query: HistoryQuery,
  ): Promise<HistoryPage> {
    const { workspaceId } = principal;
    const { changes, more } = await this.read(workspaceId, RECORD_RESOURCES[resource], id, (reader) => {
      const all = reader?.changes() ?? [];
      let start = 0;
      if (query.cursor !== undefined) {
        start = all.findIndex((change) => change.hash === query.cursor) + 1;
        // Refused like a malformed cursor: well formed, but not one this record's history gave.
        if (start === 0)
          throw new ValidationFailedException(
            [
              {
                code: 'custom',
                path: [],
                message: "not a cursor of this record's history",
                input: query.cursor,
              },
            ],
            { part: 'query', name: 'cursor' },
          );
      }
      return { changes: all.slice(start, start + query.limit), more: all.length > start + query.limit };
    });
    const last = changes.at(-1);
    return {
      recordId: id,
      identity: await this.identityOf(workspaceId, id),
      data: await this.describe(workspaceId, id, changes),
      nextCursor: more && last ? encodeHistoryCursor(last.hash) : null,
    };
  }

  async asOf(principal: Principal, resource: RecordResource, id: string, at: Date): Promise<AsOfView> {
    const entityType = RECORD_RESOURCES[resource];
    const state = await this.read(
      principal.workspaceId,
      entityType,
      id,
      (reader, policies) => (reader === null ? null : reader.stateAt(at, policies)),
      { policies: true },
    );
    if (state === null)
      throw new CodedHttpException(
        HttpStatus.NOT_FOUND,
        'not_yet_existing',
        `the ${entityType} ${id} did not exist yet at ${at.toISOString()}: no change of it had been made by then`,
      );
    return {
      id,
      type: entityType,
      at: at.toISOString(),
      fields: state.values,
      provenance: labelProvenance(
        Object.fromEntries(
          Object.entries(state.provenance).map(([field, p]) => [
            field,
            { source: p.source, eventTime: p.eventTime.toISOString(), conflicted: p.conflicted },
          ]),
        ),
        await this.labels.resolve(principal.workspaceId, sourcesOf([state.provenance])),
      ) as AsOfView['provenance'],
    };
  }

  /**
   * The record's document, loaded once, in one snapshot with the check that the record is
   * this workspace's and of this type (a compaction committing between the reads of the
   * snapshot and of its chunks would otherwise lose changes). 404 when the record is not
   * there; `reader` is null when it has no document yet. Policies are read only if asked for.
   */
  private read<T>(
    workspaceId: WorkspaceId,
    entityType: EntityType,
    id: string,
    use: (reader: EntityReader | null, policies: PolicyMap) => T,
    options: { policies?: boolean } = {},
  ): Promise<T> {
    return this.prisma.$transaction(
      async (tx) => {
        const found = await tx.$queryRaw<{ id: string }[]>`
          SELECT id::text FROM entity
           WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND entity_type = ${entityType}`;
        if (found.length === 0) throw new NotFoundException(`no ${entityType} ${id}`);
        const store = new PgMergeStore(sqlOf(tx));
        const policies = options.policies ? await store.policies(workspaceId, entityType) : {};
        const read = await readEntity(store, id, (reader) => ({ value: use(reader, policies) }));
        return read === null ? use(null, policies) : read.value;
      },
      { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
    );
  }

  /**
   * The record's identity events: the links it holds (with the reason each was made) and the
   * merges and unmerges that name it, newest first. A record's links are few; read whole.
   */
  private async identityOf(workspaceId: WorkspaceId, entityId: string): Promise<IdentityEventView[]> {
    const [links, operations] = await Promise.all([
      this.prisma.$queryRaw<
        {
          at: Date;
          connection_id: string;
          provider: string | null;
          external_id: string;
          reason: LinkReasonRow;
        }[]
      >`
        SELECT l.created_at AS at, l.connection_id::text, c.provider::text AS provider, l.external_id,
               l.link_reason AS reason
          FROM source_link l LEFT JOIN connection c ON c.id = l.connection_id AND c.workspace_id = l.workspace_id
         WHERE l.entity_id = ${entityId}::uuid AND l.workspace_id = ${workspaceId}::uuid`,
      this.prisma.$queryRaw<
        {
          at: Date;
          id: string;
          kind: 'merge' | 'unmerge';
          survivor: string;
          absorbed: string;
          reason: LinkReasonRow;
          by: string | null;
          undone: boolean;
        }[]
      >`
        SELECT created_at AS at, id::text, kind::text AS kind, payload->>'survivorId' AS survivor,
               payload->>'absorbedId' AS absorbed, payload->'reason' AS reason, payload->>'requestedBy' AS by,
               undone_at IS NOT NULL AS undone
          FROM identity_operation
         WHERE workspace_id = ${workspaceId}::uuid
           AND ${entityId} IN (payload->>'survivorId', payload->>'absorbedId')`,
    ]);
    const events: IdentityEventView[] = [
      ...links.map(
        (l): IdentityEventView => ({
          kind: 'linked',
          at: l.at.toISOString(),
          connectionId: l.connection_id,
          provider: l.provider,
          externalId: l.external_id,
          because:
            l.reason === null
              ? null
              : { rule: l.reason.rule, evidence: l.reason.evidence, score: l.reason.score },
        }),
      ),
      ...operations.map(
        (o): IdentityEventView => ({
          kind: o.kind,
          at: o.at.toISOString(),
          operationId: o.id,
          survivorId: o.survivor,
          absorbedId: o.absorbed,
          because:
            o.kind === 'unmerge'
              ? o.reason
              : mergeReasonOf({ reason: o.reason ?? undefined, requestedBy: o.by ?? undefined }),
          undone: o.undone,
        }),
      ),
    ];
    return events.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : 0));
  }

  /** The page's changes with their origins named: three queries for the page, none per change. */
  private async describe(
    workspaceId: WorkspaceId,
    entityId: string,
    changes: readonly HistoryEntry[],
  ): Promise<HistoryEntryView[]> {
    if (changes.length === 0) return [];
    const idsOf = (kind: 'connection' | 'user') => [
      ...new Set(
        changes.filter((c) => c.source.kind === kind && UUID.test(c.source.id)).map((c) => c.source.id),
      ),
    ];
    const named = (key: string) => RESOLUTION_KEY.exec(key)?.[1]?.toLowerCase();
    const resolving = [
      ...new Set(
        changes.flatMap((c) => {
          const conflictId = c.source.kind === 'user' ? named(c.eventKey) : undefined;
          return conflictId === undefined ? [] : [conflictId];
        }),
      ),
    ];
    const [labels, connections, keys, conflicts] = await Promise.all([
      this.labels.resolve(workspaceId, {
        actors: changes.filter((c) => c.source.kind === 'user').map((c) => c.source.id),
        connections: idsOf('connection'),
      }),
      this.prisma.$queryRaw<{ id: string; provider: string; display_name: string | null }[]>`
        SELECT id::text, provider::text AS provider, display_name FROM connection
         WHERE id = ANY(${idsOf('connection')}::uuid[]) AND workspace_id = ${workspaceId}::uuid`,
      this.prisma.$queryRaw<{ id: string; name: string }[]>`
        SELECT id::text, name FROM api_key
         WHERE id = ANY(${idsOf('user')}::uuid[]) AND workspace_id = ${workspaceId}::uuid`,
      this.prisma.$queryRaw<{ id: string; field: string; user_id: string | null }[]>`
        SELECT id::text, field, resolution->>'userId' AS user_id FROM merge_conflict
         WHERE id = ANY(${resolving}::uuid[]) AND entity_id = ${entityId}::uuid
           AND workspace_id = ${workspaceId}::uuid AND status = 'resolved'`,
    ]);
    const connectionById = new Map(connections.map((c) => [c.id, c]));
    const keyById = new Map(keys.map((k) => [k.id, k]));
    const conflictById = new Map(conflicts.map((c) => [c.id, c]));
    return changes.map((change) => {
      const { source } = change;
      const connection = source.kind === 'connection' ? connectionById.get(source.id) : undefined;
      const conflictId = source.kind === 'user' ? named(change.eventKey) : undefined;
      const conflict = conflictId === undefined ? undefined : conflictById.get(conflictId);
      // Settled by this person, in this change: the decision names the field the change set.
      const resolved =
        conflict !== undefined &&
        conflict.user_id === source.id &&
        Object.hasOwn(change.fields, conflict.field);
      return {
        id: change.hash,
        at: change.time.toISOString(),
        source: {
          kind: source.kind,
          id: source.id,
          provider: connection?.provider ?? null,
          name:
            source.kind === 'connection'
              ? (connection?.display_name ?? null)
              : (keyById.get(source.id)?.name ?? null),
          ...labels.source(source),
        },
        fields: Object.fromEntries(
          Object.entries(change.fields).map(([field, set]) => [
            field,
            { value: set.value, eventTime: set.eventTime.toISOString() },
          ]),
        ),
        conflictResolution: resolved,
        conflictId: resolved ? (conflictId ?? null) : null,
      };
    });
  }
}

/** Plain SQL through Prisma's transaction, as PgMergeStore takes it. */
function sqlOf(tx: Prisma.TransactionClient): Queryable {
  return {
    async query<R extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) {
      const rows = await tx.$queryRawUnsafe<R[]>(sql, ...params);
      return { rows, rowCount: rows.length };
    },
  };
}
