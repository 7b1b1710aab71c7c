import { randomUUID } from 'node:crypto';
import { HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ENTITY_TYPES, type EntityType } from '@syncline/core';
import type { Prisma } from '@syncline/core/db';
import {
  type DismissIntent,
  dismissOperationId,
  identityOperationChange,
  type MergeIntent,
  type UnmergeIntent,
  uuidV5,
} from '@syncline/identity';
import { z } from 'zod';
import { toPage } from '../admin/page-cursor';
import { actorRef } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { EditLog } from '../records/edits';
import { RECORD_RESOURCES, type RecordResource, type RecordView } from '../records/records.schemas';
import { RecordsService } from '../records/records.service';
import {
  type EntityRow,
  IdentityReviewRepository,
  type OperationRow,
  type PossibleDuplicateRecord,
} from './identity-review.repository';
import type {
  IdentityOperationPage,
  IdentityOperationQuery,
  IdentityOperationView,
  MergeResource,
  PossibleDuplicatePage,
  PossibleDuplicateQuery,
  PossibleDuplicateView,
  UnmergedView,
} from './identity-review.schemas';
import { encodePriorityCursor } from './identity-review.schemas';

/** What a merge or unmerge answers: applied by the sync stage in time, or accepted (202). */
export type OperationOutcome<T> = { applied: boolean; operationId: string } & (
  | { applied: true; value: T }
  | { applied: false }
);

/** What an operation's payload (applied) or intent (on the log) tells about it; anything may be absent. */
const operationFacts = z.object({
  entityType: z.enum(ENTITY_TYPES).optional().catch(undefined),
  survivorId: z.uuid().optional().catch(undefined),
  absorbedId: z.uuid().optional().catch(undefined),
  undoes: z.uuid().optional().catch(undefined),
  requestedBy: z.string().optional().catch(undefined),
});
type OperationFacts = z.output<typeof operationFacts>;
const factsOf = (value: Prisma.JsonValue | null): OperationFacts => {
  const parsed = operationFacts.safeParse(value);
  return parsed.success ? parsed.data : {};
};

const resourceOf = (entityType: EntityType): RecordResource =>
  (Object.keys(RECORD_RESOURCES) as RecordResource[]).find((r) => RECORD_RESOURCES[r] === entityType) ??
  'people';

/**
 * Identity review for salespeople: the possible duplicates identity found (pairs alike, not
 * sure enough to merge), dismissed as not the same or merged; and merges and unmerges of
 * records. A merge or unmerge is an identity operation on the change log, under the
 * workspace's own connection like an edit: the sync stage applies it (links, documents,
 * writeback), so a replay of the log applies it again at the same point.
 */
@Injectable()
export class IdentityReviewService {
  constructor(
    @Inject(IdentityReviewRepository) private readonly review: IdentityReviewRepository,
    @Inject(RecordsService) private readonly records: RecordsService,
    @Inject(EditLog) private readonly log: EditLog,
  ) {}

  async duplicates(principal: Principal, query: PossibleDuplicateQuery): Promise<PossibleDuplicatePage> {
    const cursor = query.cursor;
    if (cursor !== undefined && ('priority' in cursor ? 'priority' : 'newest') !== query.sort)
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'validation_failed',
        `cursor: a cursor of another sort than sort=${query.sort}`,
      );
    const rows = await this.review.duplicates(principal.workspaceId, {
      status: query.status,
      entityType: query.entityType,
      sort: query.sort,
      before: cursor,
      limit: query.limit + 1,
    });
    if (query.sort === 'newest') {
      const page = toPage(rows, query.limit);
      return { data: page.rows.map(toDuplicateView), nextCursor: page.nextCursor };
    }
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      data: page.map(toDuplicateView),
      nextCursor: rows.length > query.limit && last ? encodePriorityCursor(last) : null,
    };
  }

  async duplicate(principal: Principal, id: string): Promise<PossibleDuplicateView> {
    const row = await this.review.duplicate(principal.workspaceId, id);
    if (!row) throw new NotFoundException(`no possible duplicate ${id}`);
    return toDuplicateView(row);
  }

  /**
   * Not the same: recorded with who said so, and never suggested again. The dismissal goes on
   * the change log under the workspace's own connection, like a merge, and identity applies it
   * there (so a fold of the log dismisses the pair again at the same point); answered once
   * applied, or as it stands (still open) if the sync stage did not apply it in time.
   * Dismissing twice is one dismissal.
   */
  async dismiss(
    principal: Principal,
    id: string,
  ): Promise<{ applied: boolean; value: PossibleDuplicateView }> {
    const { workspaceId } = principal;
    const row = await this.review.duplicate(workspaceId, id);
    if (!row) throw new NotFoundException(`no possible duplicate ${id}`);
    if (row.status === 'open') {
      const intent: DismissIntent = {
        kind: 'dismiss',
        operationId: dismissOperationId(workspaceId, row.id),
        workspaceId,
        entityType: row.entityType,
        duplicateId: row.id,
        requestedBy: actorRef(principal.actor),
      };
      await this.log.appendOwn(workspaceId, (connectionId) => identityOperationChange(intent, connectionId));
    }
    const now = (await this.review.duplicate(workspaceId, id)) ?? row;
    if (now.status === 'merged')
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'already_merged',
        `the pair ${id} was merged: undo the merge instead (POST /api/v1/identity-operations/{operationId}/unmerge)`,
      );
    return { applied: now.status === 'dismissed', value: toDuplicateView(now) };
  }

  /** Merges `absorbedId` into `survivorId`; answers with the merged record once the sync stage applied it. */
  async merge(
    principal: Principal,
    resource: MergeResource,
    survivorId: string,
    absorbedId: string,
    idempotencyKey?: string,
  ): Promise<OperationOutcome<RecordView>> {
    const { workspaceId } = principal;
    const entityType = RECORD_RESOURCES[resource];
    const operationId = this.operationIdOf(principal, 'merge', idempotencyKey);
    // A retried request whose merge was applied answers as the first one did.
    if (await this.review.operation(workspaceId, operationId))
      return { applied: true, operationId, value: await this.records.get(principal, resource, survivorId) };
    const survivor = await this.review.entity(workspaceId, survivorId);
    if (!survivor || survivor.entityType !== entityType)
      throw new NotFoundException(`no ${entityType} ${survivorId}`);
    if (survivor.id === absorbedId.toLowerCase())
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'same_record',
        `a ${entityType} cannot be merged into itself`,
      );
    const absorbed = await this.review.entity(workspaceId, absorbedId);
    if (!absorbed) throw new NotFoundException(`no ${entityType} ${absorbedId} to merge into ${survivorId}`);
    if (absorbed.entityType !== entityType)
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'type_mismatch',
        `${absorbedId} is a ${absorbed.entityType}, not a ${entityType}: only records of one type merge`,
      );
    refuseMerged(entityType, survivor, absorbed);
    const intent: MergeIntent = {
      kind: 'merge',
      operationId,
      workspaceId,
      entityType,
      survivorId: survivor.id,
      absorbedId: absorbed.id,
      requestedBy: actorRef(principal.actor),
    };
    const accepted = await this.log.appendOwn(workspaceId, (connectionId) =>
      identityOperationChange(intent, connectionId),
    );
    if (accepted.applied) {
      if (await this.review.operation(workspaceId, operationId))
        return {
          applied: true,
          operationId,
          value: await this.records.get(principal, resource, survivor.id),
        };
      // Read but not applied: the sync stage refused it, for what changed since the checks above.
      const [s, a] = await Promise.all([
        this.review.entity(workspaceId, survivor.id),
        this.review.entity(workspaceId, absorbed.id),
      ]);
      if (s && a) refuseMerged(entityType, s, a);
    }
    return { applied: false, operationId };
  }

  /** Undoes a merge: both records come back with their systems; answers with both once applied. */
  async unmerge(
    principal: Principal,
    mergeId: string,
    idempotencyKey?: string,
  ): Promise<OperationOutcome<UnmergedView>> {
    const { workspaceId } = principal;
    const operationId = this.operationIdOf(principal, `unmerge:${mergeId.toLowerCase()}`, idempotencyKey);
    const merge = await this.review.operation(workspaceId, mergeId);
    if (!merge) {
      if (await this.review.operationOnLog(workspaceId, mergeId))
        throw new CodedHttpException(
          HttpStatus.CONFLICT,
          'not_applied',
          `operation ${mergeId} is not applied (yet): GET /api/v1/identity-operations/${mergeId} follows it`,
        );
      throw new NotFoundException(`no merge operation ${mergeId}`);
    }
    const facts = factsOf(merge.payload);
    const { survivorId, absorbedId, entityType } = facts;
    if (merge.kind !== 'merge' || !survivorId || !absorbedId || !entityType)
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'not_a_merge',
        `operation ${mergeId} is an unmerge: only a merge can be undone`,
      );
    const answer = async (): Promise<OperationOutcome<UnmergedView>> => {
      const resource = resourceOf(entityType);
      const [survivor, restored] = await Promise.all([
        this.records.get(principal, resource, survivorId),
        this.records.get(principal, resource, absorbedId),
      ]);
      return { applied: true, operationId, value: { operationId, survivor, restored } };
    };
    // A retried request whose unmerge was applied answers as the first one did.
    if (await this.review.operation(workspaceId, operationId)) return answer();
    refuseUndone(merge);
    const survivor = await this.review.entity(workspaceId, survivorId);
    if (survivor?.mergedInto)
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'merged_since',
        `${survivorId} has since been merged into ${survivor.mergedInto}: undo that merge first`,
      );
    const intent: UnmergeIntent = {
      kind: 'unmerge',
      operationId,
      workspaceId,
      entityType,
      undoes: merge.id,
      requestedBy: actorRef(principal.actor),
    };
    const accepted = await this.log.appendOwn(workspaceId, (connectionId) =>
      identityOperationChange(intent, connectionId),
    );
    if (accepted.applied) {
      if (await this.review.operation(workspaceId, operationId)) return answer();
      const now = await this.review.operation(workspaceId, mergeId);
      if (now) refuseUndone(now);
    }
    return { applied: false, operationId };
  }

  async operation(principal: Principal, id: string): Promise<IdentityOperationView> {
    const row = await this.review.operation(principal.workspaceId, id);
    if (row) return (await this.operationViews(principal, [row]))[0] as IdentityOperationView;
    const intent = await this.review.operationOnLog(principal.workspaceId, id);
    if (!intent) throw new NotFoundException(`no identity operation ${id}`);
    const facts = factsOf(intent);
    return {
      id: id.toLowerCase(),
      kind: isUnmerge(intent) ? 'unmerge' : 'merge',
      status: 'pending',
      entityType: facts.entityType ?? null,
      ...(await this.summaries(principal, [facts]))[0]!,
      undoes: facts.undoes ?? null,
      requestedBy: facts.requestedBy ?? null,
      appliedAt: null,
      undoneAt: null,
    };
  }

  async operations(principal: Principal, query: IdentityOperationQuery): Promise<IdentityOperationPage> {
    const rows = await this.review.operations(principal.workspaceId, {
      recordId: query.recordId,
      before: query.cursor,
      limit: query.limit + 1,
    });
    const page = toPage(rows, query.limit);
    return { data: await this.operationViews(principal, page.rows), nextCursor: page.nextCursor };
  }

  private async operationViews(principal: Principal, rows: OperationRow[]): Promise<IdentityOperationView[]> {
    const facts = rows.map((row) => factsOf(row.payload));
    const summaries = await this.summaries(principal, facts);
    return rows.map((row, i) => ({
      id: row.id,
      kind: row.kind,
      status: row.undoneAt ? 'undone' : 'applied',
      entityType: facts[i]?.entityType ?? null,
      ...summaries[i]!,
      undoes: facts[i]?.undoes ?? null,
      requestedBy: facts[i]?.requestedBy ?? null,
      appliedAt: row.createdAt.toISOString(),
      undoneAt: row.undoneAt?.toISOString() ?? null,
    }));
  }

  /** The two records of each operation, by id and name (those still there). */
  private async summaries(
    principal: Principal,
    facts: readonly OperationFacts[],
  ): Promise<Pick<IdentityOperationView, 'survivor' | 'absorbed'>[]> {
    const ids = facts
      .flatMap((f) => [f.survivorId, f.absorbedId])
      .filter((v): v is string => v !== undefined);
    const entities = await this.review.entities(principal.workspaceId, [...new Set(ids)]);
    const summary = (entityId: string | undefined) => {
      const entity = entities.find((e) => e.id === entityId);
      return entity ? { id: entity.id, displayName: entity.displayName } : null;
    };
    return facts.map((f) => ({ survivor: summary(f.survivorId), absorbed: summary(f.absorbedId) }));
  }

  /** A retried request with the same key (same key, same kind) names the same operation. */
  private operationIdOf(principal: Principal, kind: string, idempotencyKey: string | undefined): string {
    return idempotencyKey === undefined
      ? randomUUID()
      : uuidV5(
          `identity-review:${principal.workspaceId}:${actorRef(principal.actor)}:${kind}:${idempotencyKey}`,
        );
  }
}

const isUnmerge = (intent: Prisma.JsonValue | null): boolean =>
  typeof intent === 'object' && intent !== null && !Array.isArray(intent) && intent.kind === 'unmerge';

function refuseMerged(entityType: EntityType, survivor: EntityRow, absorbed: EntityRow): void {
  if (absorbed.mergedInto === survivor.id)
    throw new CodedHttpException(
      HttpStatus.CONFLICT,
      'already_merged',
      `${absorbed.id} is already merged into ${survivor.id}`,
    );
  for (const [role, row] of [
    ['this', survivor],
    ['the', absorbed],
  ] as const)
    if (row.mergedInto)
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'already_merged',
        `${role} ${entityType} ${row.id} was merged into ${row.mergedInto}: merge with that one instead`,
      );
}

function refuseUndone(merge: OperationRow): void {
  if (merge.undoneAt)
    throw new CodedHttpException(
      HttpStatus.CONFLICT,
      'already_undone',
      `merge ${merge.id} is already undone`,
    );
}

const asObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};

function toDuplicateView(row: PossibleDuplicateRecord): PossibleDuplicateView {
  const record = (r: PossibleDuplicateRecord['a']) => ({
    id: r.id,
    displayName: r.displayName,
    fields: asObject(r.fields),
    sourceLinks: r.sourceLinks,
    mergedInto: r.mergedInto,
  });
  return {
    id: row.id,
    entityType: row.entityType,
    status: row.status,
    score: row.score,
    evidence: Array.isArray(row.evidence) ? row.evidence : [],
    priority: Number(row.priority),
    a: record(row.a),
    b: record(row.b),
    createdAt: row.createdAt.toISOString(),
    reviewedBy: row.reviewedBy,
    reviewedAt: row.reviewedAt?.toISOString() ?? null,
  };
}
