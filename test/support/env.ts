// Where the test tiers find PostgreSQL and Redis. Tests never use the developer's own
// database or key space: every database they make is named syncline_test_*, every Redis
// key starts with syncline-test:.
export const TEST_PG_SERVER = process.env.TEST_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_DB_PREFIX = 'syncline_test_';
export const TEST_REDIS_PREFIX = 'syncline-test';

export const dbUrl = (name: string): string => `${TEST_PG_SERVER}/${name}`;
