import { BadRequestException, HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { ProviderWebUrls } from '@syncline/connectors';
import { type EntityType, type FieldValueType, fieldValueType, isUnifiedField } from '@syncline/core';
import type { Prisma } from '@syncline/core/db';
import type { z } from 'zod';
import { ActorLabels, type Labels } from '../auth/actor-labels';
import { actorRef } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { CodedHttpException, ValidationFailedException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EditLog } from './edits';
import { labelProvenance, sourcesOf } from './provenance-labels';
import {
  type ConflictCursor,
  type ConflictRow,
  type EntityRecord,
  RecordsRepository,
} from './records.repository';
import {
  type ConflictPage,
  type ConflictQuery,
  type ConflictView,
  type EditBody,
  encodeListCursor,
  FIELD_VALUE_SCHEMAS,
  type ListQuery,
  type ListSort,
  RECORD_RESOURCES,
  type RecordPage,
  type RecordResource,
  type RecordView,
  STAGE_FIELD,
} from './records.schemas';
import { providerWebUrls, withUrls } from './source-links';

/** What an edit answers: the record as merged, or (not merged in time) that it was accepted. */
export type EditOutcome = { applied: true; record: RecordView } | { applied: false; changeKey: string };

/** Reads of the unified view, one collection per entity type; always within the caller's workspace. */
@Injectable()
export class RecordsService {
  constructor(
    @Inject(RecordsRepository) private readonly records: RecordsRepository,
    @Inject(EditLog) private readonly edits: EditLog,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
  ) {
    this.webUrls = providerWebUrls(config);
  }

  private readonly webUrls: ProviderWebUrls;

  async list(principal: Principal, resource: RecordResource, query: ListQuery): Promise<RecordPage> {
    const entityType = RECORD_RESOURCES[resource];
    const stageField = STAGE_FIELD[entityType];
    // One row more than asked says whether there is a next page.
    const rows = await this.records.list(principal.workspaceId, entityType, {
      email: query.email?.toLowerCase(),
      domain: query.domain?.toLowerCase(),
      text: query.q?.toLowerCase(),
      owner: query.owner,
      stage: query.stage !== undefined && stageField ? { field: stageField, value: query.stage } : undefined,
      updatedSince: query.updatedSince === undefined ? undefined : new Date(query.updatedSince),
      trend: query.trend,
      sort: query.sort,
      after: query.cursor,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const labels = await this.labels.resolve(principal.workspaceId, sourcesOf(page.map((r) => r.provenance)));
    return {
      data: page.map((record) => toView(record, this.webUrls, labels)),
      nextCursor:
        rows.length > query.limit && last
          ? encodeListCursor({ sort: query.sort, id: last.id, value: sortValue(query.sort, last) })
          : null,
    };
  }

  /** A record by id; a merged-away id answers as the record it was merged into (its own id). */
  async get(principal: Principal, resource: RecordResource, id: string): Promise<RecordView> {
    const record = await this.current(principal, RECORD_RESOURCES[resource], id);
    const labels = await this.labels.resolve(principal.workspaceId, sourcesOf([record.provenance]));
    return toView(record, this.webUrls, labels);
  }

  private async current(principal: Principal, entityType: EntityType, id: string): Promise<EntityRecord> {
    // Most records were never merged away: one statement reads them; only a merged one has
    // its chain followed to the survivor.
    const asked = await this.records.find(principal.workspaceId, entityType, id);
    if (asked !== null && asked.mergedInto === null) return asked;
    const survivor = asked && (await this.records.survivorOf(principal.workspaceId, entityType, id));
    const record = survivor && (await this.records.find(principal.workspaceId, entityType, survivor));
    if (!record) throw new NotFoundException(`no ${entityType} ${id}`);
    return record;
  }

  /**
   * A person edits fields of a record: the edit goes on the change log as theirs and reaches
   * every connected system like any change. With `ifMatch`, only if the record is still at
   * that version (412 otherwise). A merged-away record is edited as its survivor (whose version
   * `ifMatch` names, as its reads answer).
   */
  async edit(
    principal: Principal,
    resource: RecordResource,
    id: string,
    body: EditBody,
    options: { ifMatch?: bigint | undefined; idempotencyKey?: string | undefined },
  ): Promise<EditOutcome> {
    const entityType = RECORD_RESOURCES[resource];
    const record = await this.current(principal, entityType, id);
    if (options.ifMatch !== undefined && options.ifMatch !== record.version)
      throw new CodedHttpException(
        HttpStatus.PRECONDITION_FAILED,
        'precondition_failed',
        `the ${entityType} is at version ${record.version}, not ${options.ifMatch}`,
      );
    const target = record.id;
    const unknown = unknownFields(entityType, body.fields, record.fields);
    if (unknown.length > 0)
      throw new BadRequestException(`not a field of a ${entityType}: ${unknown.sort().join(', ')}`);
    refuseMistyped(entityType, body.fields, (field) => ['fields', field]);
    return this.submit(principal, resource, target, body.fields, options.idempotencyKey);
  }

  async conflicts(principal: Principal, query: ConflictQuery): Promise<ConflictPage> {
    const rows = await this.records.conflicts(principal.workspaceId, {
      status: query.status,
      recordId: query.recordId,
      ...(query.cursor === undefined ? {} : { after: decodeConflictCursor(query.cursor) }),
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      data: page.map(toConflictView),
      nextCursor:
        rows.length > query.limit && last
          ? encodeConflictCursor({ createdAt: last.created_at.toISOString(), id: last.id })
          : null,
    };
  }

  async conflict(principal: Principal, id: string): Promise<ConflictView> {
    const row = await this.records.conflict(principal.workspaceId, id);
    if (!row) throw new NotFoundException(`no conflict ${id}`);
    return toConflictView(row);
  }

  /** A person settles a conflict with a value (a candidate or a new one): a change that propagates. */
  async resolve(principal: Principal, id: string, value: unknown): Promise<EditOutcome> {
    const row = await this.records.conflict(principal.workspaceId, id);
    if (!row) throw new NotFoundException(`no conflict ${id}`);
    if (row.status !== 'open')
      throw new CodedHttpException(HttpStatus.CONFLICT, 'conflict', `conflict ${id} is already resolved`);
    const resource = resourceOf(row.entity_type);
    refuseMistyped(row.entity_type, { [row.field]: value }, () => ['value']);
    return this.submit(principal, resource, row.entity_id, { [row.field]: value }, `resolve-${id}`, id);
  }

  private async submit(
    principal: Principal,
    resource: RecordResource,
    entityId: string,
    fields: Record<string, unknown>,
    idempotencyKey: string | undefined,
    resolves?: string,
  ): Promise<EditOutcome> {
    const accepted = await this.edits.submit({
      workspaceId: principal.workspaceId,
      entityType: RECORD_RESOURCES[resource],
      entityId,
      actor: actorRef(principal.actor),
      fields,
      idempotencyKey,
      resolves,
    });
    if (!accepted.applied) return { applied: false, changeKey: accepted.changeKey };
    return { applied: true, record: await this.get(principal, resource, entityId) };
  }
}

/** Fields a person may not set on this type: neither unified nor already on the record (custom). */
function unknownFields(
  entityType: EntityType,
  fields: Record<string, unknown>,
  current: Prisma.JsonValue,
): string[] {
  const carried = asObject(current);
  return Object.keys(fields).filter((f) => !isUnifiedField(entityType, f) && !Object.hasOwn(carried, f));
}

const VALUE_TYPE_WORDS: Record<FieldValueType, string> = {
  text: 'text',
  number: 'a number',
  boolean: 'true or false',
  'text list': 'a list of texts',
  'attendee list': 'a list of attendees',
};

/**
 * Refuses (400, naming each field) values not of their field's type, a number for a name or
 * text for an amount, and values past its bounds (FIELD_VALUE_SCHEMAS).
 */
function refuseMistyped(
  entityType: EntityType,
  fields: Record<string, unknown>,
  pathOf: (field: string) => PropertyKey[],
): void {
  const issues = Object.entries(fields).flatMap(([field, value]): z.core.$ZodIssue[] => {
    const type = fieldValueType(entityType, field);
    const fit = FIELD_VALUE_SCHEMAS[type].nullable().safeParse(value);
    return (fit.error?.issues ?? []).map((issue) => ({
      ...issue,
      path: [...pathOf(field), ...issue.path],
      message:
        issue.path.length === 0 && issue.code === 'invalid_type'
          ? `${field} of a ${entityType} takes ${VALUE_TYPE_WORDS[type]} (or null)`
          : `${field} of a ${entityType}: ${issue.message}`,
    }));
  });
  if (issues.length > 0) throw new ValidationFailedException(issues, { part: 'body' });
}

const resourceOf = (entityType: EntityType): RecordResource =>
  (Object.keys(RECORD_RESOURCES) as RecordResource[]).find((r) => RECORD_RESOURCES[r] === entityType) ??
  'people';

const encodeConflictCursor = (cursor: ConflictCursor): string =>
  Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');

function decodeConflictCursor(value: string): ConflictCursor {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      !Number.isNaN(Date.parse(parsed[0])) &&
      typeof parsed[1] === 'string' &&
      /^[0-9a-f-]{36}$/i.test(parsed[1])
    )
      return { createdAt: parsed[0], id: parsed[1] };
  } catch {
    // falls through to the refusal
  }
  throw new BadRequestException('cursor: not a cursor this API returned');
}

function toConflictView(row: ConflictRow): ConflictView {
  const resolution = asObject(row.resolution);
  const winner = asObject(resolution.winner as Prisma.JsonValue);
  return {
    id: row.id,
    recordId: row.entity_id,
    recordType: row.entity_type,
    field: row.field,
    kind: row.kind,
    policy: row.policy,
    status: row.status,
    candidates: (Array.isArray(row.candidates) ? row.candidates : []) as ConflictView['candidates'],
    winner: 'value' in winner ? winner.value : null,
    resolution:
      'userId' in resolution ? { value: resolution.value, by: resolution.userId, at: resolution.at } : null,
    createdAt: row.created_at.toISOString(),
    resolvedAt: row.resolved_at?.toISOString() ?? null,
  };
}

const asObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};

/**
 * The value a list sorted by `sort` continues after (as the repository compares it); under
 * `-lastContacted`, null once the page reached the records never contacted.
 */
function sortValue(sort: ListSort, record: EntityRecord): string | null | undefined {
  if (sort === 'name') return record.nameKey ?? '';
  if (sort === 'updatedAt' || sort === '-updatedAt') return record.updatedAt.toISOString();
  if (sort === '-lastContacted') return record.contactedAt?.toISOString() ?? null;
  return undefined;
}

function toView(record: EntityRecord, webUrls: ProviderWebUrls, labels: Labels): RecordView {
  return {
    id: record.id,
    type: record.entityType,
    displayName: record.displayName,
    fields: asObject(record.fields),
    provenance: labelProvenance(asObject(record.provenance), labels) as RecordView['provenance'],
    version: Number(record.version),
    sourceLinks: withUrls(record.sourceLinks, record.entityType, webUrls),
    associations: record.associations as RecordView['associations'],
    openConflicts: record.openConflicts.map((c) => ({ ...c, createdAt: c.createdAt.toISOString() })),
    mergedInto: record.mergedInto,
    deletedIn: record.deletedIn,
    flags: asObject(record.flags),
    updatedAt: record.updatedAt.toISOString(),
    insights:
      record.insights === null
        ? null
        : {
            lastContactedAt: record.insights.lastContactedAt?.toISOString() ?? null,
            lastContactedVia: record.insights.lastContactedVia,
            nextMeetingAt: record.insights.nextMeetingAt?.toISOString() ?? null,
            trend: record.insights.trend,
          },
  };
}
