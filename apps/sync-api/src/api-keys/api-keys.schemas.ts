import { z } from 'zod';
import { ROLES } from '../auth/principal';

export const createApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  role: z.enum(ROLES),
});
export type CreateApiKeyBody = z.output<typeof createApiKeyBody>;

export const apiKeyView = z.object({
  id: z.uuid(),
  name: z.string(),
  role: z.enum(ROLES),
  prefix: z.string().describe('Public part of the key, safe to show in lists.'),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable().describe('Updated at most once a minute.'),
  revokedAt: z.iso.datetime().nullable(),
});
export type ApiKeyView = z.output<typeof apiKeyView>;

export const createdApiKeyView = apiKeyView.extend({
  key: z.string().describe('The full key, `sk_<prefix>_<secret>`. Shown this once; only a hash is kept.'),
});
export type CreatedApiKeyView = z.output<typeof createdApiKeyView>;

export const apiKeyListView = z.object({ data: z.array(apiKeyView) });
