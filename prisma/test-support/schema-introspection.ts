import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { get_dmmf } from '@prisma/prisma-schema-wasm';
import type { Client } from 'pg';

/**
 * Both sides of the schema check: what schema.prisma declares (through Prisma's own parser,
 * the DMMF) and what a migrated database has (pg_catalog), in the same shapes.
 */

// The part of the DMMF the check reads.
export interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'object' | 'enum' | 'unsupported';
  isList: boolean;
  isRequired: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  hasDefaultValue: boolean;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
export interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName: string | null }[];
}
export interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  fields: { name: string }[];
}
export interface Datamodel {
  models: DmmfModel[];
  enums: DmmfEnum[];
  indexes: DmmfIndex[];
}

export const SCHEMA_PATH = join(__dirname, '..', 'schema.prisma');

export function readDatamodel(path = SCHEMA_PATH): Datamodel {
  const dmmf = JSON.parse(get_dmmf(JSON.stringify({ prismaSchema: readFileSync(path, 'utf8') }))) as {
    datamodel: Datamodel;
  };
  return dmmf.datamodel;
}

export const tableOf = (model: DmmfModel): string => model.dbName ?? model.name;
export const columnOf = (field: DmmfField): string => field.dbName ?? field.name;
export const enumTypeOf = (e: DmmfEnum): string => e.dbName ?? e.name;
export const scalarFields = (model: DmmfModel): DmmfField[] =>
  model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');

export function columnsOf(model: DmmfModel, fieldNames: readonly string[]): string[] {
  return fieldNames.map((name) => {
    const field = model.fields.find((f) => f.name === name);
    if (field === undefined) throw new Error(`${model.name} has no field ${name}`);
    return columnOf(field);
  });
}

// Postgres' identifier limit; Prisma cuts the table/column part so the suffix survives.
const MAX_IDENTIFIER = 63;

/** The constraint and index names Prisma generates when the schema does not `map:` one. */
export function prismaDefaultName(
  table: string,
  columns: readonly string[],
  kind: DmmfIndex['type'] | 'fk',
): string {
  if (kind === 'id') return `${table}_pkey`;
  const suffix = { unique: '_key', normal: '_idx', fulltext: '_idx', fk: '_fkey' }[kind];
  return `${[table, ...columns].join('_').slice(0, MAX_IDENTIFIER - suffix.length)}${suffix}`;
}

/** The column type Prisma's PostgreSQL connector creates for a field, as pg_type.typname. */
export function expectedColumnType(
  field: DmmfField,
  enums: readonly DmmfEnum[],
): { type: string; precision?: number } {
  const base = ((): { type: string; precision?: number } => {
    if (field.kind === 'enum') {
      const e = enums.find((candidate) => candidate.name === field.type);
      if (e === undefined) throw new Error(`unknown enum ${field.type}`);
      return { type: enumTypeOf(e) };
    }
    const [native, args = []] = field.nativeType ?? [];
    if (native !== undefined) {
      const precision = args[0] === undefined ? undefined : Number(args[0]);
      const byNative: Record<string, string> = {
        Uuid: 'uuid',
        Text: 'text',
        VarChar: 'varchar',
        Char: 'bpchar',
        Timestamptz: 'timestamptz',
        Timestamp: 'timestamp',
        Date: 'date',
        Integer: 'int4',
        SmallInt: 'int2',
        BigInt: 'int8',
        JsonB: 'jsonb',
        Json: 'json',
        ByteA: 'bytea',
        DoublePrecision: 'float8',
        Real: 'float4',
        Decimal: 'numeric',
        Boolean: 'bool',
      };
      const type = byNative[native];
      if (type === undefined) throw new Error(`add native type @db.${native} to expectedColumnType`);
      return precision === undefined ? { type } : { type, precision };
    }
    const byScalar: Record<string, { type: string; precision?: number }> = {
      String: { type: 'text' },
      Int: { type: 'int4' },
      BigInt: { type: 'int8' },
      Boolean: { type: 'bool' },
      Json: { type: 'jsonb' },
      Bytes: { type: 'bytea' },
      Float: { type: 'float8' },
      Decimal: { type: 'numeric' },
      DateTime: { type: 'timestamp', precision: 3 },
    };
    const scalar = byScalar[field.type];
    if (scalar === undefined) throw new Error(`add scalar type ${field.type} to expectedColumnType`);
    return scalar;
  })();
  return field.isList ? { ...base, type: `_${base.type}` } : base;
}

/**
 * The column default the migration must have written, as pg_get_expr shows it; null for
 * none; undefined where the check does not go (defaults it cannot predict simply).
 */
export function expectedColumnDefault(
  field: DmmfField,
  enums: readonly DmmfEnum[],
): string | null | undefined {
  if (!field.hasDefaultValue) return null;
  const value = field.default;
  if (typeof value === 'object' && value !== null && 'name' in value) {
    const fn = (value as { name: string }).name;
    if (fn === 'now') return 'CURRENT_TIMESTAMP';
    // Generated by the client, never by the database.
    if (fn === 'uuid' || fn === 'cuid' || fn === 'nanoid' || fn === 'ulid') return null;
    return undefined;
  }
  if (field.kind === 'enum') {
    const e = enums.find((candidate) => candidate.name === field.type);
    const dbValue = e?.values.find((v) => v.name === value)?.dbName ?? value;
    return e === undefined ? undefined : `'${String(dbValue)}'::${enumTypeOf(e)}`;
  }
  const numeric = ['Int', 'BigInt', 'Float', 'Decimal'].includes(field.type);
  if (numeric && (typeof value === 'number' || typeof value === 'string')) return String(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string' && field.type === 'Json') {
    return `'${value}'::${field.nativeType?.[0] === 'Json' ? 'json' : 'jsonb'}`;
  }
  if (typeof value === 'string' && field.type === 'String') return `'${value}'::text`;
  return undefined;
}

export interface DbColumn {
  table: string;
  column: string;
  type: string;
  precision: number | null;
  nullable: boolean;
  default: string | null;
}
export interface DbIndex {
  table: string;
  name: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
}
export interface DbForeignKey {
  table: string;
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

const ACTIONS: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

export async function readDatabase(client: Client) {
  const tables = (
    await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`,
    )
  ).rows.map((r) => r.name);

  const columns = (
    await client.query<DbColumn>(
      `SELECT c.relname AS table, a.attname AS column, t.typname AS type,
              CASE WHEN t.typname IN ('timestamptz', 'timestamp', 'time', 'timetz') AND a.atttypmod >= 0
                   THEN a.atttypmod END AS precision,
              NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
    )
  ).rows;

  const enums = new Map<string, string[]>();
  for (const row of (
    await client.query<{ name: string; value: string }>(
      `SELECT t.typname AS name, e.enumlabel AS value FROM pg_enum e
         JOIN pg_type t ON t.oid = e.enumtypid JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' ORDER BY t.typname, e.enumsortorder`,
    )
  ).rows) {
    enums.set(row.name, [...(enums.get(row.name) ?? []), row.value]);
  }

  const indexes = (
    await client.query<DbIndex>(
      `SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
              array(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                     ORDER BY k.ord)::text[] AS columns
         FROM pg_index ix
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public'
        ORDER BY t.relname, i.relname`,
    )
  ).rows;

  const foreignKeys = (
    await client.query<Omit<DbForeignKey, 'onDelete' | 'onUpdate'> & { del: string; upd: string }>(
      `SELECT t.relname AS table, c.conname AS name, rt.relname AS "refTable",
              c.confdeltype AS del, c.confupdtype AS upd,
              array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
                     ORDER BY k.ord)::text[] AS columns,
              array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum
                     ORDER BY k.ord)::text[] AS "refColumns"
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_class rt ON rt.oid = c.confrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND c.contype = 'f'
        ORDER BY t.relname, c.conname`,
    )
  ).rows.map(({ del, upd, ...fk }) => ({
    ...fk,
    onDelete: ACTIONS[del] ?? del,
    onUpdate: ACTIONS[upd] ?? upd,
  }));

  return { tables, columns, enums, indexes, foreignKeys };
}
