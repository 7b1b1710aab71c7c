import fc from 'fast-check';
import type { JsonSchema } from './openapi-operations';

/**
 * Values from the JSON schemas of the OpenAPI document: one valid value (deterministic, for
 * requests that must pass validation) and arbitraries of valid and broken values (for fuzzing).
 * Only what zod emits is understood: types, enums, consts, formats, lengths, bounds, unions.
 */

/**
 * The key the generators give objects that take any keys (`additionalProperties`): record
 * edits accept custom fields a record already carries, so the seeded records carry this one.
 */
export const FREE_KEY = 'note';

export interface SampleOptions {
  /** Every uuid in the value: the caller aims it at rows of its choice. */
  uuid: () => string;
  /** The text strings are made of. */
  text?: string;
}

const FIXED_TIME = '2026-11-20T10:00:00.000Z';

/** A value the schema accepts, as plain as possible. */
export function validValue(schema: JsonSchema, options: SampleOptions): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum.find((v) => v !== null) ?? null;
  const [first] = schema.anyOf ?? schema.oneOf ?? [];
  if (first !== undefined) return validValue(first, options);
  if (schema.allOf !== undefined)
    return Object.assign({}, ...schema.allOf.map((part) => validValue(part, options)));
  switch (typeOf(schema)) {
    case 'string':
      return validString(schema, options);
    case 'integer':
    case 'number': {
      if (typeof schema.default === 'number') return schema.default;
      const low = lowerBound(schema) ?? 1;
      return Math.min(low, upperBound(schema) ?? low);
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(schema.minItems ?? 0, schema.maxItems === 0 ? 0 : 1);
      return Array.from({ length: count }, () => validValue(schema.items ?? {}, options));
    }
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {}))
        value[name] = validValue(property, options);
      const free = schema.additionalProperties;
      if (free !== undefined && free !== false && Object.keys(value).length === 0)
        value[FREE_KEY] = validValue(free === true ? {} : free, options);
      return value;
    }
    default:
      return options.text ?? 'probe';
  }
}

function validString(schema: JsonSchema, options: SampleOptions): string {
  switch (schema.format) {
    case 'uuid':
      return options.uuid();
    case 'date-time':
      return FIXED_TIME;
    case 'date':
      return FIXED_TIME.slice(0, 10);
    case 'email':
      return 'probe@example.test';
    case 'uri':
    case 'url':
      return 'https://example.test/probe';
  }
  if (typeof schema.default === 'string') return schema.default;
  if (typeof schema.example === 'string') return schema.example;
  if (schema.pattern !== undefined) {
    const matching = fc.stringMatching(new RegExp(schema.pattern)).filter((s) => fitsLength(schema, s));
    const [sample] = fc.sample(matching, { numRuns: 1, seed: 1 });
    if (sample !== undefined) return sample;
  }
  const base = options.text ?? 'probe';
  const min = schema.minLength ?? 0;
  const text = base.repeat(Math.ceil(Math.max(min, 1) / base.length));
  return text.slice(0, Math.max(min, Math.min(text.length, schema.maxLength ?? text.length)));
}

const fitsLength = (schema: JsonSchema, s: string): boolean =>
  s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY);

function typeOf(schema: JsonSchema): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type !== undefined) return type;
  if (schema.properties !== undefined || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function lowerBound(schema: JsonSchema): number | undefined {
  if (typeof schema.exclusiveMinimum === 'number') return schema.exclusiveMinimum + 1;
  if (schema.minimum !== undefined)
    return schema.exclusiveMinimum === true ? schema.minimum + 1 : schema.minimum;
  return undefined;
}

function upperBound(schema: JsonSchema): number | undefined {
  if (typeof schema.exclusiveMaximum === 'number') return schema.exclusiveMaximum - 1;
  if (schema.maximum !== undefined)
    return schema.exclusiveMaximum === true ? schema.maximum - 1 : schema.maximum;
  return undefined;
}

// ── arbitraries ──

/** Printable ASCII: what any HTTP client can put in a header. */
export const headerText = (maxLength = 40): fc.Arbitrary<string> =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

/** Mostly valid values of the schema, the way a real client would send them. */
export function schemaArbitrary(
  schema: JsonSchema,
  uuids: fc.Arbitrary<string>,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  const inner = (s: JsonSchema) => schemaArbitrary(s, uuids, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined && alternatives.length > 0) return fc.oneof(...alternatives.map(inner));
  switch (typeOf(schema)) {
    case 'string': {
      if (schema.format === 'uuid') return uuids;
      if (schema.format === 'date-time')
        // Mostly times of this era (a record's past is asked of them), now and then any date at all.
        return fc
          .oneof(
            {
              arbitrary: fc.date({ min: new Date(0), max: new Date('2100-01-01'), noInvalidDate: true }),
              weight: 3,
            },
            { arbitrary: fc.date({ noInvalidDate: true }), weight: 1 },
          )
          .map((d) => d.toISOString());
      if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern));
      const minLength = schema.minLength ?? 0;
      const any = fc.string({
        minLength,
        maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 20, 20)),
      });
      // A value no rule describes (a time zone): mostly the document's example, now and then any text.
      return typeof schema.example !== 'string'
        ? any
        : fc.oneof({ arbitrary: fc.constant(schema.example), weight: 3 }, { arbitrary: any, weight: 1 });
    }
    case 'integer':
      return fc.integer({ min: lowerBound(schema) ?? -1_000, max: upperBound(schema) ?? 1_000_000 });
    case 'number':
      return fc.double({ min: lowerBound(schema) ?? -1e9, max: upperBound(schema) ?? 1e9, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(inner(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      const named = fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, inner(s)])),
        { requiredKeys: (schema.required ?? []).filter((name) => name in properties) },
      );
      const free = schema.additionalProperties;
      if (free === undefined || free === false || Object.keys(properties).length > 0) return named;
      // Mostly the key the seeded rows carry, so that maps of fields are often valid.
      return fc.dictionary(
        fc.oneof(
          { arbitrary: fc.constant(FREE_KEY), weight: 4 },
          { arbitrary: fc.string({ minLength: 1, maxLength: 12 }), weight: 1 },
        ),
        inner(free === true ? {} : free),
        { minKeys: 1, maxKeys: 2 },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A change that breaks (or strains) a valid value at one place. */
export type Mutation =
  | { kind: 'wrong type'; at: number; value: unknown }
  | { kind: 'unknown field'; at: number; name: string; value: unknown }
  | { kind: 'missing field'; at: number; pick: number }
  | { kind: 'huge string'; at: number; length: number }
  /** Text no field may hold (a NUL, a lone surrogate) in place of a value. */
  | { kind: 'unstorable text'; at: number; text: string }
  | { kind: 'deep nesting'; at: number; depth: number; asArray: boolean };

export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('wrong type' as const),
    at: fc.nat(),
    value: fc.oneof(
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      fc.constant([]),
      fc.constant({}),
      fc.array(fc.integer(), { maxLength: 3 }),
    ),
  }),
  fc.record({
    kind: fc.constant('unknown field' as const),
    at: fc.nat(),
    name: fc.oneof(
      fc.string({ minLength: 1, maxLength: 20 }),
      fc.constantFrom('__proto__', 'constructor', 'prototype', ''),
    ),
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({ kind: fc.constant('missing field' as const), at: fc.nat(), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('huge string' as const),
    at: fc.nat(),
    // Up to a megabyte: still under the body limit, so the value itself must be refused.
    length: fc.oneof(fc.integer({ min: 10_000, max: 200_000 }), fc.constant(1_000_000)),
  }),
  fc.record({
    kind: fc.constant('unstorable text' as const),
    at: fc.nat(),
    text: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'a\udfffb', '\ude00\ud83d'),
  }),
  fc.record({
    kind: fc.constant('deep nesting' as const),
    at: fc.nat(),
    depth: fc.oneof(fc.integer({ min: 50, max: 5_000 }), fc.integer({ min: 5_000, max: 100_000 })),
    asArray: fc.boolean(),
  }),
);

type Path = (string | number)[];

/**
 * The JSON text of the value with the mutation applied at one of its places (picked by `at`).
 * Deep nesting is spliced in as text: building and serialising it as a value would overflow
 * the test's own stack first.
 */
export function mutatedJson(value: unknown, mutation: Mutation): string {
  const copy = structuredClone(value);
  const places = placesOf(copy);
  const containers = places.filter((path) => isContainer(at(copy, path)));
  switch (mutation.kind) {
    case 'wrong type':
      return stringify(replace(copy, pick(places, mutation.at), structuredClone(mutation.value)));
    case 'huge string':
      return stringify(replace(copy, pick(places, mutation.at), 'x'.repeat(mutation.length)));
    case 'unstorable text':
      return stringify(replace(copy, pick(places, mutation.at), mutation.text));
    case 'deep nesting': {
      const [open, close] = mutation.asArray ? ['[', ']'] : [`{"${FREE_KEY}":`, '}'];
      const nested = `${open.repeat(mutation.depth)}"bottom"${close.repeat(mutation.depth)}`;
      const hole = `deep-nesting-${'#'.repeat(8)}`;
      return stringify(replace(copy, pick(places, mutation.at), hole)).replace(JSON.stringify(hole), nested);
    }
    case 'unknown field': {
      const target = containers.length === 0 ? undefined : at(copy, pick(containers, mutation.at));
      if (Array.isArray(target)) target.push(mutation.value);
      else if (isContainer(target))
        // defineProperty, so that `__proto__` becomes a key of the JSON rather than the prototype.
        Object.defineProperty(target, mutation.name, {
          value: mutation.value,
          enumerable: true,
          configurable: true,
          writable: true,
        });
      else return stringify({ [mutation.name]: mutation.value });
      return stringify(copy);
    }
    case 'missing field': {
      const objects = containers.filter((path) => !Array.isArray(at(copy, path)));
      const target =
        objects.length === 0 ? undefined : (at(copy, pick(objects, mutation.at)) as Record<string, unknown>);
      const keys = target === undefined ? [] : Object.keys(target);
      if (target === undefined || keys.length === 0) return '';
      delete target[pick(keys, mutation.pick)];
      return stringify(copy);
    }
  }
}

const stringify = (value: unknown): string => JSON.stringify(value) ?? '';

const pick = <T>(items: readonly T[], index: number): T => items[index % items.length] as T;
const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] =>
  typeof value === 'object' && value !== null;

function placesOf(value: unknown, path: Path = []): Path[] {
  const places: Path[] = [path];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) places.push(...placesOf(item, [...path, index]));
  } else if (isContainer(value))
    for (const [key, item] of Object.entries(value)) places.push(...placesOf(item, [...path, key]));
  return places;
}

function at(value: unknown, path: Path): unknown {
  let current = value;
  for (const segment of path) current = (current as Record<string | number, unknown>)[segment];
  return current;
}

function replace(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1] as string | number] = value;
  return root;
}
