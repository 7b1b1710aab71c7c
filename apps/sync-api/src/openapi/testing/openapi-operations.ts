import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OPENAPI_JSON_PATH } from '../openapi';

/**
 * The operations of the API as its own OpenAPI document lists them, read at run time so that
 * the generic suites cover a route the moment it is documented.
 */

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'] as const;
export type HttpMethod = Uppercase<(typeof METHODS)[number]>;

/** The parts of JSON Schema the generators understand (zod's output, as @nestjs/swagger emits it). */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  /** A value the API documents as valid: the generators' pick where no rule describes them (a time zone). */
  example?: unknown;
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: HttpMethod;
  /** The templated path, as documented: `/api/v1/people/{id}`. */
  path: string;
  /** `GET /api/v1/people/{id}`: how the suites name an operation. */
  key: string;
  parameters: Parameter[];
  body?: { required: boolean; contentType: string; schema: JsonSchema };
  /** Every documented status. */
  statuses: number[];
  /** A documented response is a server-sent event stream (long-lived). */
  streams: boolean;
  /** The operation declares a security requirement (an API key). */
  secured: boolean;
}

interface DocumentShape {
  paths: Record<string, Partial<Record<string, OperationShape>> & { parameters?: unknown[] }>;
  components?: { schemas?: Record<string, JsonSchema>; parameters?: Record<string, ParameterShape> };
  security?: unknown[];
}
interface ParameterShape {
  $ref?: string;
  name: string;
  in: Parameter['in'];
  required?: boolean;
  schema?: JsonSchema;
}
interface OperationShape {
  parameters?: ParameterShape[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
}

export type OpenApiDocument = DocumentShape;

/** The document the running app serves (the same one `/docs` shows). */
export async function fetchOpenApiDocument(app: NestFastifyApplication): Promise<OpenApiDocument> {
  const res = await app.inject({ method: 'GET', url: `/${OPENAPI_JSON_PATH}` });
  if (res.statusCode !== 200) throw new Error(`GET /${OPENAPI_JSON_PATH} answered ${res.statusCode}`);
  const document = res.json<OpenApiDocument>();
  if (typeof document.paths !== 'object' || document.paths === null)
    throw new Error('the OpenAPI document has no paths');
  return document;
}

export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const parameters = [
        ...((item.parameters as ParameterShape[] | undefined) ?? []),
        ...(operation.parameters ?? []),
      ]
        .map((p) => resolveParameter(document, p))
        .map((p) => ({
          name: p.name,
          in: p.in,
          required: p.in === 'path' || p.required === true,
          schema: deref(document, p.schema ?? {}),
        }));
      const content = Object.entries(operation.requestBody?.content ?? {});
      const [contentType, media] = content.find(([type]) => type.includes('json')) ?? content[0] ?? [];
      const responses = operation.responses ?? {};
      const upper = method.toUpperCase() as HttpMethod;
      operations.push({
        method: upper,
        path,
        key: `${upper} ${path}`,
        parameters,
        ...(contentType === undefined
          ? {}
          : {
              body: {
                required: operation.requestBody?.required === true,
                contentType,
                schema: deref(document, media?.schema ?? {}),
              },
            }),
        statuses: Object.keys(responses)
          .map(Number)
          .filter((status) => Number.isInteger(status)),
        streams: Object.values(responses).some((response) =>
          Object.keys(response.content ?? {}).some((type) => type.startsWith('text/event-stream')),
        ),
        secured: (operation.security ?? document.security ?? []).length > 0,
      });
    }
  }
  return operations;
}

export const pathParameters = (operation: Operation): Parameter[] =>
  operation.parameters.filter((p) => p.in === 'path');

/** The path with each `{name}` replaced by its value, URL-encoded. */
export function fillPath(path: string, values: Readonly<Record<string, string>>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return encodeURIComponent(value);
  });
}

export function withQuery(url: string, query: Readonly<Record<string, string | readonly string[]>>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of typeof value === 'string' ? [value] : value) search.append(name, one);
  }
  const text = search.toString();
  return text === '' ? url : `${url}?${text}`;
}

export const isUuidSchema = (schema: JsonSchema): boolean => schema.format === 'uuid';

function resolveParameter(document: OpenApiDocument, parameter: ParameterShape): ParameterShape {
  if (parameter.$ref === undefined) return parameter;
  const name = parameter.$ref.replace('#/components/parameters/', '');
  const found = document.components?.parameters?.[name];
  if (found === undefined) throw new Error(`unresolved parameter ${parameter.$ref}`);
  return found;
}

/** Inlines `$ref`s; a schema that refers to itself is cut off (as "anything") past a few levels. */
export function deref(document: OpenApiDocument, schema: JsonSchema, depth = 0): JsonSchema {
  if (depth > 12) return {};
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const found = document.components?.schemas?.[name];
    if (found === undefined) throw new Error(`unresolved schema ${schema.$ref}`);
    return deref(document, found, depth + 1);
  }
  const inner = (s: JsonSchema): JsonSchema => deref(document, s, depth + 1);
  return {
    ...schema,
    ...(schema.properties && {
      properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, inner(v)])),
    }),
    ...(typeof schema.additionalProperties === 'object' && {
      additionalProperties: inner(schema.additionalProperties),
    }),
    ...(schema.items && { items: inner(schema.items) }),
    ...(schema.anyOf && { anyOf: schema.anyOf.map(inner) }),
    ...(schema.oneOf && { oneOf: schema.oneOf.map(inner) }),
    ...(schema.allOf && { allOf: schema.allOf.map(inner) }),
  };
}
