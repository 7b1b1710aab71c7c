import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DERIVED_TABLE_NAMES, DERIVED_TABLES } from './derived-tables';

const ROOT = join(__dirname, '../../..');

/** Every table of prisma/schema.prisma (its @@map names). */
const schemaTables = (): Set<string> =>
  new Set(
    [...readFileSync(join(ROOT, 'prisma/schema.prisma'), 'utf8').matchAll(/@@map\("([a-z_]+)"\)/g)].map(
      (m) => m[1] as string,
    ),
  );

/** The sync stage's code and the libraries it composes to write (tests and testing helpers aside). */
const STAGE_SOURCES = [
  'libs/sync-stage/src',
  'libs/identity/src',
  'libs/conflicts/src',
  'apps/workers/src/sync',
];

const sourceFiles = (dir: string): string[] => {
  let entries: string[];
  try {
    entries = readdirSync(join(ROOT, dir));
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === 'testing' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) && !/\.(int-)?spec\.ts$/.test(name) ? [path] : [];
  });
};

/** Tables the stage writes but that are not folds of the log: each with why. */
const WRITTEN_NOT_DERIVED: Readonly<Record<string, string>> = {
  connection: 'configuration and state of a connection (the push stage notes its progress there)',
  dead_letter: 'writes the push stage gave up on (push.service.ts), not a fold of the log',
};

describe('DERIVED_TABLES', () => {
  it('names tables of prisma/schema.prisma, each once', () => {
    const tables = schemaTables();
    expect(DERIVED_TABLE_NAMES.filter((t) => !tables.has(t))).toEqual([]);
    expect(new Set(DERIVED_TABLE_NAMES).size).toBe(DERIVED_TABLE_NAMES.length);
  });

  it('names every table of prisma/schema.prisma that the sync stage writes', () => {
    const tables = schemaTables();
    const files = STAGE_SOURCES.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(10);
    const written = new Map<string, string>();
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?([a-z_]+)"?/gi)) {
        const table = (m[1] as string).toLowerCase();
        if (tables.has(table)) written.set(table, file);
      }
    }
    // The scan finds the stage's writes at all (a moved folder would otherwise pass silently).
    expect([...written.keys()]).toEqual(expect.arrayContaining(['entity', 'source_link', 'outbox']));
    const missing = [...written]
      .filter(([table]) => !DERIVED_TABLE_NAMES.includes(table) && WRITTEN_NOT_DERIVED[table] === undefined)
      .map(([table, file]) => `${table} (written in ${file})`);
    expect(missing, 'add these to DERIVED_TABLES (libs/log/src/derived-tables.ts)').toEqual([]);
  });

  it('scopes every table to a workspace, with $1 the workspace id', () => {
    for (const { table, workspaceRows } of DERIVED_TABLES)
      expect(
        workspaceRows((t) => `real.${t}`),
        table,
      ).toContain('$1');
  });
});
