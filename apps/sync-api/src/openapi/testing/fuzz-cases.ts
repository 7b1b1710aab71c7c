import fc from 'fast-check';
import type { ApiRequest } from './api-call';
import {
  fillPath,
  isUuidSchema,
  type JsonSchema,
  type Operation,
  type Parameter,
  withQuery,
} from './openapi-operations';
import {
  headerText,
  type Mutation,
  mutatedJson,
  mutationArbitrary,
  schemaArbitrary,
  validValue,
} from './schema-values';

/** What one fuzz case sends as its body. */
export type BodyCase =
  /** A value, broken by the mutation if any when sent (kept apart so that a failing case prints small). */
  | { kind: 'json'; value: unknown; mutation?: Mutation }
  | { kind: 'raw'; contentType: string; text: string }
  | { kind: 'over the size limit' }
  | { kind: 'none' };

export interface FuzzCase {
  path: Record<string, string>;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: BodyCase;
}

export interface FuzzContext {
  /** Ids of rows that exist, weighted up for the operation's own (`reachable`). */
  ids: readonly string[];
  reachable: readonly string[];
  /** Fastify's body limit, in bytes. */
  bodyLimit: number;
  /**
   * The router's limit on a path parameter (encoded). Longer ones are left out: Fastify answers
   * them with a 414 in its own shape, before the app's error filter (a known bug, see the report).
   */
  maxParamLength: number;
}

/** Text a parameter should refuse, up to `longest` characters. */
const oddText = (longest: number) =>
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.integer({ min: Math.floor(longest / 2), max: longest }).map((n) => 'a'.repeat(n)),
    fc.constantFrom(
      '',
      ' ',
      '..',
      '%',
      '%00',
      'a\u0000b',
      'null',
      'undefined',
      '-1',
      '1e309',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8',
      '0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8fz',
      "' OR 1=1 --",
    ),
  );

/** Percent-encoded, so never a malformed escape (which Fastify also answers in its own shape: left out, see the report). */
function pathValueArbitrary(parameter: Parameter, context: FuzzContext): fc.Arbitrary<string> {
  return valueArbitrary(parameter, context, context.maxParamLength).filter(
    (value) => encodeURIComponent(value).length <= context.maxParamLength,
  );
}

function valueArbitrary(parameter: Parameter, context: FuzzContext, longest = 12_000): fc.Arbitrary<string> {
  const odd = oddText(longest);
  if (isUuidSchema(parameter.schema)) {
    return fc.oneof(
      {
        arbitrary: fc.constantFrom(...(context.reachable.length > 0 ? context.reachable : context.ids)),
        weight: 6,
      },
      { arbitrary: fc.constantFrom(...context.ids), weight: 1 },
      { arbitrary: fc.uuid(), weight: 1 },
      { arbitrary: fc.uuid().map((id) => id.toUpperCase()), weight: 1 },
      { arbitrary: odd, weight: 2 },
    );
  }
  const uuids = fc.constantFrom(...context.ids);
  return fc.oneof(
    { arbitrary: schemaArbitrary(parameter.schema, uuids).map(asText), weight: 4 },
    { arbitrary: odd, weight: 2 },
  );
}

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? '');

const ifMatch = fc.oneof(
  fc.nat().map((n) => `"${n}"`),
  fc.nat().map((n) => `W/"${n}"`),
  fc.nat({ max: 20 }).map(String),
  fc.bigInt({ min: 10n ** 17n, max: 10n ** 40n }).map(String),
  fc.constantFrom('*', '""', 'W/', '"1", "2"', '-1', '1.5'),
  headerText(),
);
const idempotencyKey = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,120}$/),
  headerText(),
  fc.integer({ min: 121, max: 8_000 }).map((n) => 'k'.repeat(n)),
);

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'application/json, text/plain',
  'nonsense',
];

const MALFORMED_JSON = [
  '{',
  '{"a":}',
  "{'a':1}",
  '[1,2',
  'nul',
  '',
  '{"a":1}garbage',
  'NaN',
  '\u0000',
  '{"a":"\\x"}',
];

function bodyArbitrary(operation: Operation, context: FuzzContext): fc.Arbitrary<BodyCase> {
  if (operation.method === 'GET' || operation.method === 'HEAD') return fc.constant({ kind: 'none' });
  const schema = operation.body?.schema ?? {};
  const uuids = fc.constantFrom(...(context.reachable.length > 0 ? context.reachable : context.ids));
  const valid = operation.body === undefined ? fc.constant({}) : schemaArbitrary(schema, uuids);
  const json = (value: fc.Arbitrary<unknown>) => value.map((v): BodyCase => ({ kind: 'json', value: v }));
  return fc.oneof(
    { arbitrary: json(valid), weight: 6 },
    {
      arbitrary: json(
        fc.constant(validValue(schema, { uuid: () => context.reachable[0] ?? context.ids[0] ?? '' })),
      ),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(valid, mutationArbitrary)
        .map(([value, mutation]): BodyCase => ({ kind: 'json', value, mutation })),
      weight: 5,
    },
    { arbitrary: json(fc.jsonValue({ maxDepth: 3 })), weight: 1 },
    {
      arbitrary: fc
        .oneof(
          fc.constantFrom(...MALFORMED_JSON),
          valid
            .map((value) => JSON.stringify(value) ?? '')
            .chain((text) => fc.nat(text.length).map((n) => text.slice(0, n))),
        )
        .map((text): BodyCase => ({ kind: 'raw', contentType: 'application/json', text })),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(valid, fc.constantFrom(...CONTENT_TYPES)).map(
        ([value, contentType]): BodyCase => ({
          kind: 'raw',
          contentType,
          text: JSON.stringify(value) ?? '',
        }),
      ),
      weight: 2,
    },
    { arbitrary: fc.constant<BodyCase>({ kind: 'over the size limit' }), weight: 1 },
    { arbitrary: fc.constant<BodyCase>({ kind: 'none' }), weight: 1 },
  );
}

/** An optional parameter sent in two cases out of five: most requests carry few of them. */
const sometimes = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: value, weight: 2 });

const present = <T>(values: Record<string, T | undefined>): Record<string, T> =>
  Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Record<string, T>;

/** Random requests of one operation: path, query, headers and body, mostly almost right. */
export function fuzzCaseArbitrary(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzCase> {
  const path = Object.fromEntries(
    operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, pathValueArbitrary(p, context)]),
  );
  const documented = Object.fromEntries(
    operation.parameters
      .filter((p) => p.in === 'query')
      .map((p) => {
        const value = fc.oneof(
          { arbitrary: valueArbitrary(p, context), weight: 4 },
          // A repeated parameter arrives as an array.
          { arbitrary: fc.array(valueArbitrary(p, context), { minLength: 2, maxLength: 3 }), weight: 1 },
        );
        return [p.name, p.required ? value : sometimes(value)];
      }),
  );
  const headers = Object.fromEntries(
    [
      ...operation.parameters
        .filter((p) => p.in === 'header')
        .map(
          (p) => [p.name.toLowerCase(), p.schema.enum ? valueArbitrary(p, context) : headerText(60)] as const,
        ),
      ['if-match', ifMatch] as const,
      ['idempotency-key', idempotencyKey] as const,
    ].map(([name, value]) => [name, sometimes(value)]),
  );
  return fc.record({
    path: fc.record(path),
    query: fc
      .tuple(
        fc.record(documented).map(present),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 }), {
          maxKeys: 2,
        }),
      )
      .map(([known, unknown]) => ({ ...unknown, ...known })),
    headers: fc.record(headers).map(present),
    body: bodyArbitrary(operation, context),
  });
}

/** The request a case makes; over the size limit, the path is a reachable one, so the limit is what answers. */
export function fuzzRequest(
  operation: Operation,
  fuzz: FuzzCase,
  context: FuzzContext,
  auth: Record<string, string>,
): ApiRequest {
  const oversize = fuzz.body.kind === 'over the size limit';
  const path = oversize ? reachablePath(operation, context) : fuzz.path;
  const url = withQuery(fillPath(operation.path, path), oversize ? {} : fuzz.query);
  const headers: Record<string, string> = { ...(oversize ? {} : fuzz.headers), ...auth };
  switch (fuzz.body.kind) {
    case 'none':
      return { method: operation.method, url, headers };
    case 'json':
      return {
        method: operation.method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: fuzz.body.mutation
          ? mutatedJson(fuzz.body.value, fuzz.body.mutation)
          : (JSON.stringify(fuzz.body.value) ?? ''),
      };
    case 'raw':
      return {
        method: operation.method,
        url,
        headers: { ...headers, 'content-type': fuzz.body.contentType },
        payload: fuzz.body.text,
      };
    case 'over the size limit':
      return {
        method: operation.method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: Buffer.from(`{"pad":"${'x'.repeat(context.bodyLimit)}"}`),
      };
  }
}

function reachablePath(operation: Operation, context: FuzzContext): Record<string, string> {
  const id = context.reachable[0] ?? context.ids[0] ?? '';
  return Object.fromEntries(
    operation.parameters
      .filter((p) => p.in === 'path')
      .map((p) => [p.name, isUuidSchema(p.schema) ? id : String(validValue(p.schema, { uuid: () => id }))]),
  );
}

/**
 * Strings no route may take, each answered 500 once: PostgreSQL cannot store NUL in text,
 * a lone surrogate is not Unicode (the query engine refuses to encode it), and a megabyte
 * is past any field (and past a unique index's row). `url` is how a client writes it in a
 * URL: a lone surrogate as the bytes a lax encoder makes of it (WTF-8), which are no UTF-8.
 */
export const HOSTILE_STRINGS = {
  NUL: { text: 'probe\u0000probe', url: 'probe%00probe' },
  // The router and the query parser keep bytes that are no UTF-8 as written (`%ED…`): harmless text.
  'a lone surrogate': { text: 'probe\ud800probe', url: 'probe%ED%A0%80probe', urlHarmless: true },
  '1 MB': { text: 'x'.repeat(1_000_000), url: 'x'.repeat(1_000_000) },
} as const satisfies Record<string, { text: string; url: string; urlHarmless?: true }>;

/** One request carrying a hostile string in one place. */
export interface HostileCase {
  /** Where the string is and which it is, for messages: `query q: NUL`, `body fields.note (key): 1 MB`. */
  what: string;
  request: ApiRequest;
  /** What it carries reaches the app as sent, so must be refused (otherwise it may be taken as harmless text). */
  mustRefuse: boolean;
}

/** Stands for the hostile string in a URL until it is written in, already encoded. */
const HOLE = 'hostile-string-here';

/**
 * Requests of the operation that are valid but for one place, which holds a hostile string:
 * each path and query parameter in turn, each string of the body and each key of its objects.
 * Ids name a reachable row, so that a hostile string elsewhere gets as far as it can.
 */
export function hostileCases(
  operation: Operation,
  context: FuzzContext,
  auth: Record<string, string>,
): HostileCase[] {
  const id = context.reachable[0] ?? context.ids[0] ?? '';
  const path = reachablePath(operation, context);
  const query = Object.fromEntries(
    operation.parameters
      .filter((p) => p.in === 'query' && p.required)
      .map((p) => [p.name, isUuidSchema(p.schema) ? id : String(validValue(p.schema, { uuid: () => id }))]),
  );
  const body =
    operation.body === undefined ? undefined : validValue(operation.body.schema, { uuid: () => id });
  const request = (
    values: { path?: Record<string, string>; query?: Record<string, string>; body?: string },
    inUrl = '',
  ): ApiRequest => ({
    method: operation.method,
    url: withQuery(fillPath(operation.path, values.path ?? path), values.query ?? query).replace(HOLE, inUrl),
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: values.body ?? JSON.stringify(body) }),
  });
  const cases: HostileCase[] = [];
  for (const [name, hostile] of Object.entries(HOSTILE_STRINGS)) {
    const mustRefuse = !('urlHarmless' in hostile);
    for (const p of operation.parameters) {
      if (p.in === 'path')
        cases.push({
          what: `path ${p.name}: ${name}`,
          request: request({ path: { ...path, [p.name]: HOLE } }, hostile.url),
          mustRefuse,
        });
      if (p.in === 'query')
        cases.push({
          what: `query ${p.name}: ${name}`,
          request: request({ query: { ...query, [p.name]: HOLE } }, hostile.url),
          mustRefuse,
        });
    }
    for (const place of stringPlaces(body)) {
      cases.push({
        what: `body ${place.path.join('.') || '(the body)'}${place.key ? ' (key)' : ''}: ${name}`,
        request: request({ body: JSON.stringify(place.replace(hostile.text)) }),
        mustRefuse: true,
      });
    }
  }
  return cases;
}

interface StringPlace {
  path: (string | number)[];
  /** The place is an object's key rather than a value. */
  key: boolean;
  /** A copy of the whole value with this place's string replaced. */
  replace(text: string): unknown;
}

/** Every string of a JSON value, and every key of its objects. */
function stringPlaces(root: unknown): StringPlace[] {
  const places: StringPlace[] = [];
  const walk = (value: unknown, path: (string | number)[]) => {
    if (typeof value === 'string')
      places.push({ path, key: false, replace: (text) => replaceAt(root, path, () => text) });
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, [...path, index]);
    } else if (typeof value === 'object' && value !== null)
      for (const [name, item] of Object.entries(value)) {
        places.push({
          path: [...path, name],
          key: true,
          replace: (text) =>
            replaceAt(root, path, (object) =>
              Object.fromEntries(
                Object.entries(object as Record<string, unknown>).map(([k, v]) => [k === name ? text : k, v]),
              ),
            ),
        });
        walk(item, [...path, name]);
      }
  };
  walk(root, []);
  return places;
}

function replaceAt(
  root: unknown,
  path: readonly (string | number)[],
  change: (value: unknown) => unknown,
): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return change(root);
  if (Array.isArray(root))
    return root.map((item, index) => (index === head ? replaceAt(item, rest, change) : item));
  const object = root as Record<string, unknown>;
  return { ...object, [head]: replaceAt(object[head], rest, change) };
}

/** The name of the field the unknown-field cases add: no schema has it. */
export const UNKNOWN_FIELD = 'unexpectedField';

/**
 * The operation's valid body with one field added that its schema does not name, at the top
 * and in each nested object whose fields are named (not in maps of free keys, such as an
 * edit's `fields`): each must be refused rather than dropped unnoticed.
 */
export function unknownFieldCases(
  operation: Operation,
  context: FuzzContext,
  auth: Record<string, string>,
): { what: string; request: ApiRequest }[] {
  if (operation.body === undefined) return [];
  const id = context.reachable[0] ?? context.ids[0] ?? '';
  const body = validValue(operation.body.schema, { uuid: () => id });
  const url = fillPath(operation.path, reachablePath(operation, context));
  return namedObjectPlaces(operation.body.schema, body).map((path) => ({
    what: path.length === 0 ? '(the body)' : path.join('.'),
    request: {
      method: operation.method,
      url,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify(
        replaceAt(body, path, (object) => ({ ...(object as object), [UNKNOWN_FIELD]: 'probe' })),
      ),
    },
  }));
}

/** Where the value has an object whose schema names its fields; alternatives are followed as validValue picks them. */
function namedObjectPlaces(
  schema: JsonSchema,
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[][] {
  const [first] = schema.anyOf ?? schema.oneOf ?? [];
  if (first !== undefined) return namedObjectPlaces(first, value, path);
  if (Array.isArray(value))
    return value.flatMap((item, index) => namedObjectPlaces(schema.items ?? {}, item, [...path, index]));
  if (typeof value !== 'object' || value === null) return [];
  const free = schema.additionalProperties;
  const named = schema.properties !== undefined && (free === undefined || free === false);
  const inner = Object.entries(value).flatMap(([name, item]) => {
    const property = schema.properties?.[name] ?? (typeof free === 'object' ? free : {});
    return namedObjectPlaces(property, item, [...path, name]);
  });
  return named ? [path, ...inner] : inner;
}
