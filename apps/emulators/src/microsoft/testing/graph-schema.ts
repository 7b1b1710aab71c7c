import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/** Graph v1.0's types as JSON Schema 2020-12, one `$defs` entry per type (specs/microsoft-graph). */
export const GRAPH_SCHEMA_FILE = resolve(
  __dirname,
  '../../../../../specs/microsoft-graph/graph-v1.0-subset.schema.json',
);

/** Validates bodies against any `$defs` type of the Graph schema: `event`, `eventCollectionResponse`, `odataError`… */
export class GraphSchema {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly id: string;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(file = GRAPH_SCHEMA_FILE) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id: string };
    addFormats(this.ajv);
    this.ajv.addSchema(schema);
    this.id = schema.$id;
  }

  /** Readable errors; empty when `body` is a valid `type`. */
  errors(type: string, body: unknown): string[] {
    let validate = this.compiled.get(type);
    if (!validate) {
      validate = this.ajv.getSchema(`${this.id}#/$defs/${type}`);
      if (!validate) throw new Error(`the Graph schema has no type ${type}`);
      this.compiled.set(type, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${type}${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  }
}

let shared: GraphSchema | undefined;

export const graphSchema = (): GraphSchema => {
  shared ??= new GraphSchema();
  return shared;
};

/** Asserts that a body is a valid Graph `type`; the failure lists what is wrong, path by path. */
export function expectGraph(type: string, body: unknown): void {
  expect(graphSchema().errors(type, body), `${type}: ${JSON.stringify(body).slice(0, 400)}`).toEqual([]);
}
