import { HttpStatus, Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { policyChangeInput } from '@syncline/conflicts';
import { type EntityType, isUnifiedField } from '@syncline/core';
import { ChangeLog } from '@syncline/log';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { z } from 'zod';
import { AuditLogService } from '../admin/audit-log.service';
import { ActorLabels, type Labels } from '../auth/actor-labels';
import { actorRef, actorViewOf } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { CodedHttpException, ValidationFailedException } from '../common/api-errors';
import { OwnConnections } from '../infra/own-connection';
import {
  PoliciesRepository,
  type RevisionRecord,
  type StoredPolicies,
  type StoredPolicy,
} from './policies.repository';
import {
  fieldPolicy,
  POLICY_KINDS,
  type PolicyKind,
  type PolicySetView,
  type ReplacePoliciesBody,
  type RevisionPage,
  type RevisionsQuery,
  type RevisionView,
  USER_SOURCE,
} from './policies.schemas';
import { customFieldsOf, isListValued, LIST_VALUED_FIELDS, unifiedFieldsOf } from './policy-fields';

const LWW = { kind: 'lww' } as const;
const storedSet = z.record(z.string(), fieldPolicy);

/**
 * The merge policies of one entity type in the caller's workspace: read them (every field,
 * lww by default), replace them as a whole (versioned, kept as revisions, audited, and put
 * on the change log), and list the revisions. The merge does not read `field_policy`: a
 * replacement goes on the log as a `policy` event in the transaction that saves it, and the
 * sync stage puts it in force where it stands on the log (policy_in_force), so every change
 * after it is merged under it, live or replayed from zero.
 */
@Injectable()
export class PoliciesService {
  constructor(
    @Inject(PoliciesRepository) private readonly policies: PoliciesRepository,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(OwnConnections) private readonly own: OwnConnections,
    @InjectPinoLogger(PoliciesService.name) private readonly logger: PinoLogger,
  ) {}

  async get(principal: Principal, entityType: EntityType): Promise<PolicySetView> {
    const [set, mappings] = await Promise.all([
      this.policies.find(principal.workspaceId, entityType),
      this.policies.fieldMappings(principal.workspaceId),
    ]);
    const known = [...unifiedFieldsOf(entityType), ...[...customFieldsOf(entityType, mappings)].sort()];
    const fields: Record<string, StoredPolicy> = {};
    for (const field of known) fields[field] = set.policies[field] ?? LWW;
    // A stored field no connection maps any more still has its policy in the merge: shown too.
    for (const [field, policy] of Object.entries(set.policies)) fields[field] = policy;
    const strategies = Object.fromEntries(
      Object.keys(fields).map((field) => [field, strategiesOf(entityType, field)]),
    );
    return {
      entityType,
      version: set.version,
      fields,
      strategies,
      updatedAt: set.updatedAt?.toISOString() ?? null,
    };
  }

  /**
   * Replaces the type's whole set. Refused with every offending field named when a field is
   * not the type's, `union` is asked for a field that holds no list, or a priority order
   * names a source that is not a connection of this workspace; 412 when `ifMatch` is stale.
   */
  async replace(
    principal: Principal,
    entityType: EntityType,
    body: ReplacePoliciesBody,
    ifMatch: number | undefined,
  ): Promise<PolicySetView> {
    const [connections, mappings] = await Promise.all([
      this.policies.providerConnectionIds(principal.workspaceId),
      this.policies.fieldMappings(principal.workspaceId),
    ]);
    const custom = customFieldsOf(entityType, mappings);
    const requested = Object.entries(body.fields).map(
      ([field, policy]) => [field, normalised(policy)] as const,
    );
    const issues = requested.flatMap(([field, policy]) =>
      problemsOf(entityType, field, policy, { connections, custom }),
    );
    if (issues.length > 0) throw new ValidationFailedException(issues, { part: 'body' });

    // lww is what a field without a row gets: only the other kinds are stored.
    const stored: StoredPolicies = Object.fromEntries(
      requested.filter(([, policy]) => policy.kind !== 'lww'),
    );
    const ownConnection = await this.own.of(principal.workspaceId);
    const replaced = await this.policies.replace(
      principal.workspaceId,
      entityType,
      stored,
      { expectedVersion: ifMatch, changedBy: actorRef(principal.actor) },
      async (tx, version) => {
        await this.audit.record(
          principal,
          'field_policy.replaced',
          entityType,
          { entityType, version, policies: summary(stored) },
          tx,
        );
        // On the log with the set or not at all: the merge puts it in force from there.
        const appended = await this.log.appendWithin(
          <T>(text: string, values: unknown[]) => tx.$queryRawUnsafe<T[]>(text, ...values),
          [
            policyChangeInput(principal.workspaceId, ownConnection, {
              entityType,
              version,
              policies: stored,
            }),
          ],
        );
        if (!appended.ok) {
          if (appended.error.code === 'Closed')
            throw new ServiceUnavailableException('shutting down; send again');
          throw new Error(`the change log refused a policy change: ${appended.error.message}`);
        }
      },
    );
    if (!replaced.ok)
      throw new CodedHttpException(
        HttpStatus.PRECONDITION_FAILED,
        'precondition_failed',
        `the ${entityType} policies are at version ${replaced.error.version}, not ${ifMatch}`,
      );
    this.logger.info(
      { workspaceId: principal.workspaceId, entityType, version: replaced.value.version },
      'field policies replaced',
    );
    return this.get(principal, entityType);
  }

  async revisions(
    principal: Principal,
    entityType: EntityType,
    query: RevisionsQuery,
  ): Promise<RevisionPage> {
    const rows = await this.policies.revisions(principal.workspaceId, entityType, {
      before: query.cursor,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const labels = await this.labels.resolve(principal.workspaceId, { actors: page.map((r) => r.changedBy) });
    return {
      data: page.map((row) => toRevisionView(row, labels)),
      nextCursor: rows.length > query.limit && last ? String(last.version) : null,
    };
  }
}

type Issue = z.core.$ZodIssue;

/** Connection ids as the database spells them (lower case), so they compare and match the merge's. */
const normalised = (policy: StoredPolicy): StoredPolicy =>
  policy.kind === 'priority' ? { kind: 'priority', order: policy.order.map((s) => s.toLowerCase()) } : policy;

function problemsOf(
  entityType: EntityType,
  field: string,
  policy: StoredPolicy,
  workspace: { connections: ReadonlySet<string>; custom: ReadonlySet<string> },
): Issue[] {
  const at = (path: PropertyKey[], message: string): Issue => ({
    code: 'custom',
    path: ['fields', field, ...path],
    message,
    input: undefined,
  });
  if (!isUnifiedField(entityType, field) && !workspace.custom.has(field))
    return [at([], `not a field of a ${entityType} (neither unified nor mapped by a connection)`)];
  if (policy.kind === 'union' && !isListValued(entityType, field)) {
    const lists = LIST_VALUED_FIELDS[entityType];
    return [
      at(
        ['kind'],
        `union merges lists and ${field} holds no list` +
          (lists.length > 0 ? ` (a ${entityType}'s lists: ${lists.join(', ')})` : ''),
      ),
    ];
  }
  if (policy.kind !== 'priority') return [];
  // The same answer for an unknown id and another workspace's: nothing about it leaks.
  return policy.order.flatMap((source, index) =>
    source === USER_SOURCE || workspace.connections.has(source)
      ? []
      : [at(['order', index], 'not a connection of this workspace')],
  );
}

/** One flat line for the audit trail, e.g. `jobTitle=manual, stage=priority(<id>>user)`. */
function summary(policies: StoredPolicies): string {
  const parts = Object.entries(policies)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([field, p]) => `${field}=${p.kind}${p.kind === 'priority' ? `(${p.order.join('>')})` : ''}`);
  return parts.length > 0 ? parts.join(', ') : 'all lww';
}

/** What the merge can do with a field: `union` only where the field holds a list. */
function strategiesOf(entityType: EntityType, field: string): PolicyKind[] {
  return POLICY_KINDS.filter((kind) => kind !== 'union' || isListValued(entityType, field));
}

function toRevisionView(row: RevisionRecord, labels: Labels): RevisionView {
  const fields = storedSet.safeParse(row.policies);
  // Only this service writes revisions, through the same schema: anything else is a bug.
  if (!fields.success) throw new Error(`field_policy_revision ${row.version} holds an unreadable set`);
  return {
    version: row.version,
    fields: fields.data,
    changedBy: { ...actorViewOf(row.changedBy), label: labels.actor(row.changedBy).label },
    createdAt: row.createdAt.toISOString(),
  };
}
