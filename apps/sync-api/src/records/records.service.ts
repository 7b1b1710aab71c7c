import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { Prisma } from '@syncline/core/db';
import type { Principal } from '../auth/principal';
import { type EntityRecord, RecordsRepository } from './records.repository';
import {
  encodeCursor,
  type ListQuery,
  RECORD_RESOURCES,
  type RecordPage,
  type RecordResource,
  type RecordView,
} from './records.schemas';

/** Reads of the unified view, one collection per entity type; always within the caller's workspace. */
@Injectable()
export class RecordsService {
  constructor(@Inject(RecordsRepository) private readonly records: RecordsRepository) {}

  async list(principal: Principal, resource: RecordResource, query: ListQuery): Promise<RecordPage> {
    // One row more than asked says whether there is a next page.
    const rows = await this.records.list(principal.workspaceId, RECORD_RESOURCES[resource], {
      email: query.email?.toLowerCase(),
      domain: query.domain?.toLowerCase(),
      afterId: query.cursor,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      data: page.map(toView),
      nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null,
    };
  }

  async get(principal: Principal, resource: RecordResource, id: string): Promise<RecordView> {
    const record = await this.records.find(principal.workspaceId, RECORD_RESOURCES[resource], id);
    if (!record) throw new NotFoundException(`no ${RECORD_RESOURCES[resource]} ${id}`);
    return toView(record);
  }
}

const asObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};

function toView(record: EntityRecord): RecordView {
  return {
    id: record.id,
    type: record.entityType,
    displayName: record.displayName,
    fields: asObject(record.fields),
    provenance: asObject(record.provenance) as RecordView['provenance'],
    version: Number(record.version),
    sourceLinks: record.sourceLinks,
    openConflicts: record.openConflicts.map((c) => ({ ...c, createdAt: c.createdAt.toISOString() })),
    mergedInto: record.mergedInto,
    flags: asObject(record.flags),
    updatedAt: record.updatedAt.toISOString(),
  };
}
