import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (generate). Migrations are applied by prisma/migrate.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/syncline' },
});
