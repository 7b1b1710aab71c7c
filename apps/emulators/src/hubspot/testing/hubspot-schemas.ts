import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { resolveObjectType } from '../object-types';
import type { CapturedResponse } from './hubspot-harness';

/** The published HubSpot OpenAPI files, kept in the repository's specs/ folder. */
export const HUBSPOT_SPECS_DIR = resolve(__dirname, '../../../../../specs/hubspot');

type Json = Record<string, unknown>;

interface Operation {
  file: string;
  method: string;
  template: string;
  pattern: RegExp;
  literals: number;
  responses: Json;
}

export interface SchemaCheck {
  response: CapturedResponse;
  operation?: string;
  schema?: string;
  errors?: string;
}

/** `/crm/v3/objects/0-3/…` and `/crm/v3/objects/deals/…` are the same operation. */
function canonicalPath(path: string): string {
  return path.replace(/^\/crm\/v3\/objects\/([^/]+)/, (whole, segment: string) => {
    const type = segment.startsWith('{') ? undefined : resolveObjectType(decodeURIComponent(segment));
    return type ? `/crm/v3/objects/${type.name}` : whole;
  });
}

/**
 * HubSpot's specs type property values as plain strings, but the API sends `null` for a
 * requested property with no value, and the SDK's own models say `string | null`. Only
 * that map is relaxed; everything else is checked as published.
 */
function allowNullPropertyValues(doc: Json): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    const props = (schema.properties as Record<string, Json> | undefined)?.properties;
    const values = props?.additionalProperties as Json | undefined;
    if (name.startsWith('SimplePublic') && values?.type === 'string') values.type = ['string', 'null'];
  }
}

/** Checks emulator answers against the response schemas of the published OpenAPI files. */
export class HubspotSchemas {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(dir = HUBSPOT_SPECS_DIR) {
    addFormats(this.ajv);
    this.ajv.addFormat('int32', true).addFormat('int64', true);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Json;
      allowNullPropertyValues(doc);
      this.ajv.addSchema(doc, file);
      for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
        const canonical = canonicalPath(template);
        const segments = canonical.split('/').filter(Boolean);
        const pattern = new RegExp(
          `^/${segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`,
        );
        for (const [method, op] of Object.entries(ops)) {
          if (!op || typeof op !== 'object' || !('responses' in op)) continue;
          this.operations.push({
            file,
            method: method.toUpperCase(),
            template,
            pattern,
            literals: segments.filter((s) => !s.startsWith('{')).length,
            responses: op.responses as Json,
          });
        }
      }
    }
  }

  /** The operation a request hit; the one with the most literal segments wins (`/search` over `/{id}`). */
  private operationOf(method: string, path: string): Operation | undefined {
    const canonical = canonicalPath(path);
    return this.operations
      .filter((o) => o.method === method && o.pattern.test(canonical))
      .sort((a, b) => b.literals - a.literals)[0];
  }

  private schemaRefOf(op: Operation, status: number): string | undefined {
    let response = (op.responses[String(status)] ?? op.responses.default) as Json | undefined;
    if (!response) return undefined;
    if (typeof response.$ref === 'string') {
      // e.g. #/components/responses/Error
      const [, , , name] = response.$ref.split('/');
      const doc = this.ajv.getSchema(op.file)?.schema as Json;
      response = ((doc.components as Json).responses as Record<string, Json>)[name ?? ''];
    }
    const content = (response?.content ?? {}) as Record<string, { schema?: Json }>;
    const schema = (content['application/json'] ?? content['*/*'])?.schema;
    return typeof schema?.$ref === 'string' ? `${op.file}${schema.$ref}` : undefined;
  }

  check(response: CapturedResponse): SchemaCheck {
    const op = this.operationOf(response.method, response.path);
    if (!op) return { response };
    const operation = `${op.method} ${op.template} (${op.file})`;
    if (response.status === 204) {
      const ok = !response.body;
      return { response, operation, ...(ok ? {} : { errors: 'a 204 carried a body' }) };
    }
    const ref = this.schemaRefOf(op, response.status);
    if (!ref) return { response, operation, errors: `no schema for status ${response.status}` };
    if (!response.contentType?.startsWith('application/json')) {
      return { response, operation, schema: ref, errors: `content type ${response.contentType}` };
    }
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    const body = JSON.parse(response.body ?? 'null') as unknown;
    const ok = validate(body);
    return {
      response,
      operation,
      schema: ref,
      ...(ok ? {} : { errors: this.ajv.errorsText(validate.errors, { separator: '; ' }) }),
    };
  }

  /** Every captured answer that maps to a published operation, checked; unmatched ones listed apart. */
  checkAll(responses: CapturedResponse[]): {
    checked: SchemaCheck[];
    failures: SchemaCheck[];
    unmatched: CapturedResponse[];
  } {
    const results = responses.map((r) => this.check(r));
    return {
      checked: results.filter((r) => r.operation),
      failures: results.filter((r) => r.errors),
      unmatched: results.filter((r) => !r.operation).map((r) => r.response),
    };
  }
}
