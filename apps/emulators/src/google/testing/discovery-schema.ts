import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The part of a Google discovery document's schema language that constrains data. */
export interface DiscoverySchema {
  id?: string;
  type?: string;
  $ref?: string;
  format?: string;
  enum?: string[];
  properties?: Record<string, DiscoverySchema>;
  additionalProperties?: DiscoverySchema;
  items?: DiscoverySchema;
}

export interface DiscoveryDocument {
  name: string;
  version: string;
  schemas: Record<string, DiscoverySchema>;
}

type JsonSchema = Record<string, unknown>;

const SCHEMA_BASE = 'https://discovery.emulator.local';

/**
 * Discovery schema → JSON Schema. Discovery has no `required`, so by default objects with
 * declared properties are closed (`additionalProperties: false`): a field the published
 * API does not have is an emulator bug worth failing on. Annotations are dropped.
 */
export function toJsonSchema(schema: DiscoverySchema, closed = true): JsonSchema {
  if (schema.$ref !== undefined) return { $ref: schema.$ref };
  const out: JsonSchema = {};
  if (schema.type !== undefined && schema.type !== 'any') out.type = schema.type;
  if (schema.enum) out.enum = schema.enum;
  Object.assign(out, formatConstraint(schema));
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, prop]) => [name, toJsonSchema(prop, closed)]),
    );
  }
  if (schema.additionalProperties)
    out.additionalProperties = toJsonSchema(schema.additionalProperties, closed);
  else if (closed && schema.properties) out.additionalProperties = false;
  if (schema.items) out.items = toJsonSchema(schema.items, closed);
  return out;
}

/** Discovery formats: 64-bit integers travel as decimal strings, `byte` is base64 (either alphabet). */
function formatConstraint(schema: DiscoverySchema): JsonSchema {
  switch (schema.format) {
    case 'int64':
      return { pattern: '^-?[0-9]+$' };
    case 'uint64':
      return { pattern: '^[0-9]+$' };
    case 'int32':
      return { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };
    case 'uint32':
      return { minimum: 0, maximum: 2 ** 32 - 1 };
    case 'date-time':
    case 'google-datetime':
      return { format: 'date-time' };
    case 'date':
      return { format: 'date' };
    case 'byte':
      return { pattern: '^[A-Za-z0-9+/_-]*={0,2}$' };
    default:
      return {};
  }
}

/** Validates data against the schemas of several discovery documents, by `api/SchemaId`. */
export class DiscoveryValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(docs: Record<string, DiscoveryDocument>, closed = true) {
    addFormats(this.ajv);
    for (const [api, doc] of Object.entries(docs)) {
      for (const [id, schema] of Object.entries(doc.schemas)) {
        // Relative $refs ("Event") resolve against this $id to the sibling schema.
        this.ajv.addSchema({ $id: `${SCHEMA_BASE}/${api}/${id}`, ...toJsonSchema(schema, closed) });
      }
    }
  }

  /** Error messages; empty when `data` is a valid `schemaId` of `api`. */
  errors(api: string, schemaId: string, data: unknown): string[] {
    const key = `${SCHEMA_BASE}/${api}/${schemaId}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.getSchema(key);
      if (!validate) throw new Error(`no schema ${schemaId} in ${api}`);
      this.compiled.set(key, validate);
    }
    if (validate(data)) return [];
    return (validate.errors ?? []).map(
      (e) => `${schemaId}${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  }
}

/** The published Google discovery documents, kept in the repository's specs/ folder. */
export const GOOGLE_SPECS_DIR = resolve(__dirname, '../../../../../specs/google');

let shared: DiscoveryValidator | undefined;

/** One validator for Calendar v3, Gmail v1 and Tasks v1 (`calendar`, `gmail`, `tasks`). */
export function googleDiscoveryValidator(): DiscoveryValidator {
  if (!shared) {
    const dir = GOOGLE_SPECS_DIR;
    const load = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as DiscoveryDocument;
    shared = new DiscoveryValidator({
      calendar: load('calendar-v3.json'),
      gmail: load('gmail-v1.json'),
      tasks: load('tasks-v1.json'),
    });
  }
  return shared;
}
