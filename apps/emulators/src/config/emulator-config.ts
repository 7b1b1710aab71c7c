import { parseEnv } from '@syncline/core';
import { z } from 'zod';

const emulatorEnvSchema = z.object({
  EMULATOR_HOST: z.string().default('127.0.0.1'),
  EMULATOR_HUBSPOT_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
  EMULATOR_GOOGLE_PORT: z.coerce.number().int().min(0).max(65535).default(4020),
  /** Microsoft 365 (Graph and the identity platform), over HTTPS; unset: 4030, or a free port when both HTTP ports are 0. */
  EMULATOR_MICROSOFT_PORT: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  /** The mail catch-all's SMTP port; unset: 4025, or a free port when both HTTP ports are 0. */
  EMULATOR_SMTP_PORT: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  EMULATOR_SEED: z.coerce.number().int().default(1),
});
export type EmulatorConfig = z.output<typeof emulatorEnvSchema>;

export const loadEmulatorConfig = (env: NodeJS.ProcessEnv = process.env): EmulatorConfig =>
  parseEnv(emulatorEnvSchema, env);
