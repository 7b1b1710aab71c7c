import { baseEnvSchema, Keyring, keyringEnvSchema, parseEnv, providerEnvSchema } from '@syncline/core';
import { z } from 'zod';

const appEnvObject = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  ...keyringEnvSchema.shape,
  ...providerEnvSchema.shape,
});

/** Every setting the API reads, parsed once at start. */
export const appConfigSchema = appEnvObject.superRefine((env, ctx) => {
  // The keyring refuses to build when the active key is missing; say so here, by name,
  // instead of failing later with a KeyringError.
  const active = env.SYNCLINE_ENCRYPTION_ACTIVE_KEY;
  if (active === undefined) return;
  try {
    Keyring.parse(env.SYNCLINE_ENCRYPTION_KEYS, active);
  } catch {
    ctx.addIssue({
      code: 'custom',
      path: ['SYNCLINE_ENCRYPTION_ACTIVE_KEY'],
      message: 'must name one of the keys in SYNCLINE_ENCRYPTION_KEYS',
    });
  }
});
export type AppConfig = Readonly<z.output<typeof appConfigSchema>>;

/** The CLI only talks to the database, so it does not demand the encryption keys. */
export const cliConfigSchema = appEnvObject.pick({ NODE_ENV: true, DATABASE_URL: true, LOG_LEVEL: true });
export type CliConfig = Readonly<z.output<typeof cliConfigSchema>>;

/** Injection token for the parsed AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Throws a ConfigError naming every bad setting. */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  return Object.freeze(parseEnv(appConfigSchema, env));
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  return Object.freeze(parseEnv(cliConfigSchema, env));
}
