import { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses settings once at start. A missing or malformed setting throws a ConfigError that
 * names every bad setting, so the process stops with a message a person can act on.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** Settings every process shares. */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL')
    .default('postgresql://postgres@127.0.0.1:5432/syncline'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().min(1).default('syncline'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(16),
});
export type BaseEnv = z.output<typeof baseEnvSchema>;
