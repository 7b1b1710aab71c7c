import { HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import {
  type ConnectionContext,
  HUBSPOT_OBJECT_TYPES,
  type HubspotProperty,
  hubspotFieldMap,
  isSynclineProperty,
  listHubspotProperties,
  propertyTypesFor,
  StaticTokenSource,
} from '@syncline/connectors';
import {
  type ConnectionId,
  type EntityType,
  isUnifiedField,
  Keyring,
  providerEndpoints,
} from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { z } from 'zod';
import { AuditLogService } from '../admin/audit-log.service';
import { actorRef, actorViewOf } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { type ApiErrorCode, CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { refusalMessage } from './connection-lifecycle';
import { credentialsAad } from './connections.service';
import {
  type MappingRevisionRecord,
  type MappingsRecord,
  MappingsRepository,
  type StoredMappings,
  storedMappingsOf,
} from './mappings.repository';
import type {
  FieldMappingBody,
  MappingRevisionPage,
  MappingRevisionsQuery,
  MappingRevisionView,
  MappingsView,
  PropertyListView,
  ReplaceMappingsBody,
} from './mappings.schemas';

/**
 * Properties HubSpot or Syncline own on every object: never a mapping's target. The insight
 * properties Syncline writes (`syncline_*`, isSynclineProperty) are its own too.
 */
const RESERVED_PROPERTIES = new Set([
  'syncline_id',
  'hs_object_id',
  'createdate',
  'hs_createdate',
  'lastmodifieddate',
  'hs_lastmodifieddate',
]);
const isReserved = (name: string): boolean => RESERVED_PROPERTIES.has(name) || isSynclineProperty(name);

/** What a property must have for a mapping to name it; anything else the portal answers is left out. */
const portalProperty = z.object({
  name: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/),
  label: z.string(),
  type: z.string().min(1),
  groupName: z.string().catch(''),
  custom: z.boolean(),
  readOnly: z.boolean(),
});

interface Problem {
  code: ApiErrorCode;
  message: string;
}

/**
 * One connection's field mappings (`<entity type>.<field>` → provider property): read them
 * with every field in force, replace them as a whole (checked against the portal's property
 * list through the connector, versioned, kept as revisions, audited), list the revisions.
 * The set in force is `connection.field_mappings`, which the workers and the webhook intake
 * read on every job and request: a replacement applies to the next pull, webhook and write.
 */
@Injectable()
export class MappingsService {
  private readonly endpoints: ReturnType<typeof providerEndpoints>;

  constructor(
    @Inject(MappingsRepository) private readonly mappings: MappingsRepository,
    @Inject(Keyring) private readonly keyring: Keyring,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(MappingsService.name) private readonly logger: PinoLogger,
  ) {
    this.endpoints = providerEndpoints(config);
  }

  async get(principal: Principal, id: string): Promise<MappingsView> {
    return toView(await this.find(principal, id));
  }

  /**
   * Replaces the whole set. Refused (400, every problem named, the first one's code) when the
   * provider has no properties to map, two fields name one property, or a property does not
   * exist in the portal or its type cannot carry the field; 409 for a disconnected connection
   * or one whose credentials the provider refuses; 412 when `ifMatch` is stale.
   */
  async replace(
    principal: Principal,
    id: string,
    body: ReplaceMappingsBody,
    ifMatch: number | undefined,
  ): Promise<MappingsView> {
    const current = await this.find(principal, id);
    if (current.status === 'disconnected') throw disconnected(id);
    // Checked before the provider is asked, and again in the transaction.
    if (ifMatch !== undefined && ifMatch !== current.version) throw stale(current.version, ifMatch);
    if (body.mappings.length > 0 && current.provider !== 'hubspot')
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'mappings_unsupported',
        `a ${current.provider} connection has fixed fields and no custom properties: nothing can be mapped`,
      );

    const problems = sharedProperties(body.mappings);
    if (problems.length === 0 && body.mappings.length > 0)
      problems.push(...(await this.checkAgainstPortal(principal, current, body.mappings)));
    if (problems.length > 0)
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        (problems[0] as Problem).code,
        problems.map((p) => p.message).join('; '),
      );

    const stored: StoredMappings = Object.fromEntries(
      body.mappings.map((m) => [`${m.entityType}.${m.field}`, m.property]),
    );
    const replaced = await this.mappings.replace(
      principal.workspaceId,
      current.id,
      stored,
      { expectedVersion: ifMatch, changedBy: actorRef(principal.actor) },
      (tx, version) =>
        this.audit.record(
          principal,
          'connection.mappings_replaced',
          current.id,
          { version, mappings: summary(stored) },
          tx,
        ),
    );
    if (!replaced.ok) {
      if (replaced.error.code === 'disconnected') throw disconnected(id);
      throw stale(replaced.error.version, ifMatch);
    }
    this.logger.info(
      { connectionId: current.id, version: replaced.value.version, mappings: body.mappings.length },
      'connection field mappings replaced',
    );
    return this.get(principal, id);
  }

  async revisions(
    principal: Principal,
    id: string,
    query: MappingRevisionsQuery,
  ): Promise<MappingRevisionPage> {
    const connection = await this.find(principal, id);
    const rows = await this.mappings.revisions(principal.workspaceId, connection.id, {
      before: query.cursor,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      connectionId: connection.id,
      externalAccountId: connection.externalAccountId,
      data: page.map(toRevisionView),
      nextCursor: rows.length > query.limit && last ? String(last.version) : null,
    };
  }

  /**
   * The portal's properties of one entity type's object, custom ones included, each marked
   * `reserved` where no mapping may name it, with the property types each field can use.
   */
  async properties(principal: Principal, id: string, entityType: EntityType): Promise<PropertyListView> {
    const connection = await this.find(principal, id);
    if (connection.status === 'disconnected') throw disconnected(id);
    const objectType = HUBSPOT_OBJECT_TYPES[entityType];
    if (connection.provider !== 'hubspot' || objectType === undefined)
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'mappings_unsupported',
        `a ${connection.provider} connection has fixed fields and no properties to map`,
      );
    const listed = await this.readProperties(
      await this.contextOf(principal, connection),
      connection,
      objectType,
    );
    const fields = hubspotFieldMap(connection.mappings)[entityType] ?? [];
    return {
      connectionId: connection.id,
      externalAccountId: connection.externalAccountId,
      entityType,
      objectType,
      properties: listed
        .map((p) => ({ ...p, reserved: p.readOnly || isReserved(p.name) }))
        .sort((a, b) => a.label.localeCompare(b.label) || a.name.localeCompare(b.name)),
      fieldTypes: Object.fromEntries(
        fields.map((f) => [f.field, [...propertyTypesFor(entityType, f.custom ? '' : f.field)]]),
      ),
      customFieldTypes: [...propertyTypesFor(entityType, '')],
    };
  }

  private async find(principal: Principal, id: string): Promise<MappingsRecord> {
    const record = await this.mappings.find(principal.workspaceId, id as ConnectionId);
    if (!record) throw new NotFoundException(`no connection ${id}`);
    return record;
  }

  /** Reads the property list of every object type the mappings name, through the connector. */
  private async checkAgainstPortal(
    principal: Principal,
    connection: MappingsRecord,
    mappings: readonly FieldMappingBody[],
  ): Promise<Problem[]> {
    const ctx = await this.contextOf(principal, connection);
    const catalogues = new Map<string, Map<string, HubspotProperty>>();
    for (const objectType of new Set(mappings.map((m) => HUBSPOT_OBJECT_TYPES[m.entityType] ?? ''))) {
      const listed = await this.readProperties(ctx, connection, objectType);
      catalogues.set(objectType, new Map(listed.map((p) => [p.name, p])));
    }
    return mappings.flatMap((m): Problem[] => {
      const objectType = HUBSPOT_OBJECT_TYPES[m.entityType] ?? '';
      const key = `${m.entityType}.${m.field}`;
      if (isReserved(m.property))
        return [
          {
            code: 'property_reserved',
            message: `${key}: ${m.property} is kept by HubSpot or Syncline itself and cannot carry a field`,
          },
        ];
      const property = catalogues.get(objectType)?.get(m.property);
      if (!property)
        return [
          {
            code: 'unknown_property',
            message: `${key}: portal ${connection.externalAccountId} has no ${objectType} property ${m.property}`,
          },
        ];
      const accepted = propertyTypesFor(m.entityType, m.field);
      if (!accepted.includes(property.type))
        return [
          {
            code: 'property_type_mismatch',
            message:
              `${key}: ${objectType} property ${m.property} is of type ${property.type}; ` +
              `${isUnifiedField(m.entityType, m.field) ? m.field : 'a custom field (text)'} needs ${accepted.join(' or ')}`,
          },
        ];
      return [];
    });
  }

  /** One object type's properties through the connector; a refusal or failure as the API's error. */
  private async readProperties(
    ctx: ConnectionContext,
    connection: MappingsRecord,
    objectType: string,
  ): Promise<HubspotProperty[]> {
    const listed = await listHubspotProperties(ctx, objectType);
    if (!listed.ok) {
      if (listed.error.code === 'AuthRevoked')
        throw new CodedHttpException(
          HttpStatus.CONFLICT,
          'credentials_required',
          `HubSpot refused connection ${connection.id}'s token while its ${objectType} properties were read: ` +
            'replace its credentials (PUT /{id}/credentials), then retry',
        );
      throw new CodedHttpException(
        HttpStatus.SERVICE_UNAVAILABLE,
        'unavailable',
        `could not read the ${objectType} properties of portal ${connection.externalAccountId}: ${listed.error.message}`,
      );
    }
    return listed.value.flatMap((raw) => {
      const parsed = portalProperty.safeParse(raw);
      if (parsed.success) return [parsed.data];
      this.logger.warn(
        { connectionId: connection.id, objectType, issues: parsed.error.issues.map((i) => i.path.join('.')) },
        'a portal property the API could not read was left out',
      );
      return [];
    });
  }

  /** A connector context for one API request: the row's current token, no shared budget (a few reads). */
  private async contextOf(principal: Principal, connection: MappingsRecord): Promise<ConnectionContext> {
    const sealed = await this.mappings.sealedCredentials(principal.workspaceId, connection.id);
    const token = sealed ? tokenOf(this.keyring.open(sealed, credentialsAad(connection.id))) : undefined;
    if (token === undefined)
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'credentials_required',
        `connection ${connection.id} has no usable credentials to read its properties with: replace them first`,
      );
    return {
      connectionId: connection.id,
      workspaceId: principal.workspaceId,
      externalAccountId: connection.externalAccountId,
      tokens: new StaticTokenSource(token),
      budget: { acquire: async () => undefined },
      endpoints: this.endpoints,
    };
  }
}

function tokenOf(plaintext: string): string | undefined {
  try {
    const credentials = JSON.parse(plaintext) as Record<string, unknown>;
    const token = credentials.privateAppToken ?? credentials.accessToken;
    return typeof token === 'string' && token.length > 0 ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Two fields of one type on one property: a property carries one field. */
function sharedProperties(mappings: readonly FieldMappingBody[]): Problem[] {
  const byProperty = new Map<string, string[]>();
  for (const m of mappings) {
    const key = `${m.entityType}:${m.property}`;
    byProperty.set(key, [...(byProperty.get(key) ?? []), m.field]);
  }
  return [...byProperty].flatMap(([key, fields]) => {
    if (fields.length < 2) return [];
    const [entityType, property] = key.split(':') as [string, string];
    return [
      {
        code: 'property_taken' as const,
        message: `${fields.map((f) => `${entityType}.${f}`).join(' and ')} all map to property ${property}: a property carries one field`,
      },
    ];
  });
}

function toMappingList(stored: StoredMappings): FieldMappingBody[] {
  return Object.entries(stored)
    .flatMap(([key, property]) => {
      const dot = key.indexOf('.');
      const entityType = key.slice(0, dot) as EntityType;
      return dot > 0 ? [{ entityType, field: key.slice(dot + 1), property }] : [];
    })
    .sort((a, b) => `${a.entityType}.${a.field}`.localeCompare(`${b.entityType}.${b.field}`));
}

function toView(record: MappingsRecord): MappingsView {
  const hubspot = record.provider === 'hubspot';
  return {
    connectionId: record.id,
    provider: record.provider,
    externalAccountId: record.externalAccountId,
    supportsMappings: hubspot,
    version: record.version,
    mappings: toMappingList(record.mappings),
    fields: hubspot ? withDefaults(hubspotFieldMap(record.mappings)) : {},
    updatedAt: record.updatedAt?.toISOString() ?? null,
  };
}

/** Each field with its default property, so a client can tell a mapping from the default it overrides. */
function withDefaults(fields: ReturnType<typeof hubspotFieldMap>): MappingsView['fields'] {
  const defaults = hubspotFieldMap({});
  return Object.fromEntries(
    Object.entries(fields).map(([entityType, list]) => {
      const byField = new Map(defaults[entityType as EntityType]?.map((f) => [f.field, f.property]));
      return [entityType, list.map((f) => ({ ...f, defaultProperty: byField.get(f.field) ?? null }))];
    }),
  );
}

/** One flat line for the audit trail, e.g. `person.leadScore=lead_score`. */
function summary(stored: StoredMappings): string {
  const parts = toMappingList(stored).map((m) => `${m.entityType}.${m.field}=${m.property}`);
  return parts.length > 0 ? parts.join(', ') : 'defaults only';
}

function toRevisionView(row: MappingRevisionRecord): MappingRevisionView {
  return {
    version: row.version,
    mappings: toMappingList(storedMappingsOf(row.mappings)),
    changedBy: actorViewOf(row.changedBy),
    createdAt: row.createdAt.toISOString(),
  };
}

const stale = (version: number, ifMatch: number | undefined): Error =>
  new CodedHttpException(
    HttpStatus.PRECONDITION_FAILED,
    'precondition_failed',
    `the mappings are at version ${version}, not ${ifMatch}`,
  );

const disconnected = (id: string): Error =>
  new CodedHttpException(
    HttpStatus.CONFLICT,
    'connection_disconnected',
    refusalMessage('connection_disconnected', id, 'take new mappings'),
  );
