import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway prisma/migrations-shaped folder: <name>/migration.sql per migration. */
export interface MigrationDir {
  readonly path: string;
  /** Writes (or overwrites) <name>/migration.sql. */
  write(name: string, sql: string): Promise<void>;
  remove(): Promise<void>;
}

export async function createMigrationDir(): Promise<MigrationDir> {
  const path = await mkdtemp(join(tmpdir(), 'syncline-migrations-'));
  return {
    path,
    async write(name, sql) {
      await mkdir(join(path, name), { recursive: true });
      await writeFile(join(path, name, 'migration.sql'), sql);
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
