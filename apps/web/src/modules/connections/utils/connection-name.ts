import { providerName } from '../../records/utils/format';

/** How the page names a connection: the name it was given, else its provider and account. */
export function connectionName(c: {
  displayName: string | null;
  provider: string;
  externalAccountId: string;
}): string {
  return c.displayName ?? `${providerName(c.provider)} ${c.externalAccountId}`;
}

export const GOOGLE_PRODUCTS = ['google-calendar', 'gmail', 'google-tasks'] as const;
export type GoogleProductKey = (typeof GOOGLE_PRODUCTS)[number];

/** The consent page that reconnects a connection: HubSpot's, or Google's for every product of that account. */
export function reconnectTarget(
  connection: { provider: string; externalAccountId: string },
  all: readonly { provider: string; externalAccountId: string; status: string }[],
): { provider: 'hubspot' } | { provider: 'google'; products: GoogleProductKey[] } {
  if (connection.provider === 'hubspot') return { provider: 'hubspot' };
  const products = GOOGLE_PRODUCTS.filter((product) =>
    all.some(
      (c) =>
        c.provider === product &&
        c.externalAccountId === connection.externalAccountId &&
        c.status !== 'disconnected',
    ),
  );
  return {
    provider: 'google',
    products: products.length > 0 ? products : [connection.provider as GoogleProductKey],
  };
}
