import { type ObjectTypeDef, type ObjectTypeName, resolveObjectType } from './object-types';
import type { Portal } from './portal';
import type { StoredRecord } from './record-store';

export interface PropertyVersionView {
  value: string;
  timestamp: string;
  sourceType: string;
  sourceId: string;
  updatedByUserId?: number;
}

/** A record as the CRM v3 API returns it (`SimplePublicObjectWithAssociations`). */
export interface PublicObject {
  id: string;
  properties: Record<string, string | null>;
  propertiesWithHistory?: Record<string, PropertyVersionView[]>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  archivedAt?: string;
  associations?: Record<string, { results: { id: string; type: string }[] }>;
}

export interface RecordView {
  /** Named properties (a missing value is `null`); none = the type's defaults. */
  properties?: string[];
  propertiesWithHistory?: string[];
  associations?: ObjectTypeName[];
  /** Every property with a value, as write answers carry. */
  allProperties?: boolean;
}

/**
 * `properties=a&properties=b` (the SDK) and `properties=a,b` (everyone else) mean the
 * same; both are accepted, mixed too.
 */
export function listParam(value: unknown): string[] {
  const parts = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return parts
    .flatMap((p) => String(p).split(','))
    .map((p) => p.trim())
    .filter(Boolean);
}

export function associationTypesParam(value: unknown): ObjectTypeName[] {
  const names = listParam(value)
    .map((v) => resolveObjectType(v)?.name)
    .filter((n): n is ObjectTypeName => n !== undefined);
  return [...new Set(names)];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function renderRecord(
  portal: Portal,
  type: ObjectTypeDef,
  record: StoredRecord,
  view: RecordView,
): PublicObject {
  const properties: Record<string, string | null> = {};
  const names = view.allProperties
    ? [...record.properties.keys()]
    : view.properties && view.properties.length > 0
      ? // HubSpot always adds the id and the two dates to a named list.
        [...view.properties, 'hs_object_id', type.createdProperty, type.modifiedProperty]
      : [...type.defaultProperties];
  for (const name of [...new Set(names)].sort()) properties[name] = record.properties.get(name) ?? null;

  const out: PublicObject = {
    id: record.id,
    properties,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    archived: record.archived,
  };
  if (record.archivedAt !== undefined) out.archivedAt = iso(record.archivedAt);
  if (view.propertiesWithHistory && view.propertiesWithHistory.length > 0) {
    out.propertiesWithHistory = {};
    for (const name of view.propertiesWithHistory) {
      out.propertiesWithHistory[name] = (record.history.get(name) ?? []).map((v) => ({
        value: v.value,
        timestamp: iso(v.timestamp),
        sourceType: v.sourceType,
        sourceId: v.sourceId,
        ...(v.updatedByUserId === undefined ? {} : { updatedByUserId: v.updatedByUserId }),
      }));
    }
  }
  if (view.associations && view.associations.length > 0) {
    const associations: NonNullable<PublicObject['associations']> = {};
    for (const to of view.associations) {
      const results = associatedIds(portal, type.name, record.id, to);
      if (results.length > 0) associations[to] = { results };
    }
    if (Object.keys(associations).length > 0) out.associations = associations;
  }
  return out;
}

/** v3-style associations: one entry per (record, association type), live records only. */
export function associatedIds(
  portal: Portal,
  from: ObjectTypeName,
  id: string,
  to: ObjectTypeName,
): { id: string; type: string }[] {
  const results: { id: string; type: string }[] = [];
  for (const edge of portal.associations.list(from, id, to)) {
    if (!portal.stores[to].get(edge.toId)) continue;
    for (const typeId of edge.typeIds) {
      const def = portal.associationTypes.get(typeId);
      if (def) results.push({ id: edge.toId, type: def.name });
    }
  }
  return results;
}
