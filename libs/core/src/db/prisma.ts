import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

export type * from '../generated/prisma/client';
export { Prisma } from '../generated/prisma/client';
export { PrismaClient };

/** A Prisma client on the pg driver adapter (Prisma 7 has no built-in engine connection). */
export function createPrismaClient(databaseUrl: string, options: { max?: number } = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}
