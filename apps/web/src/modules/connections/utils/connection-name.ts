import { providerName } from '../../records/utils/format';

/**
 * How the page names a connection: the name it was given, else its provider and account, by
 * the person's address where the provider named one (a Microsoft account's id is two GUIDs).
 */
export function connectionName(c: {
  displayName: string | null;
  provider: string;
  externalAccountId: string;
  accountAddress?: string | null;
}): string {
  return c.displayName ?? `${providerName(c.provider)} ${c.accountAddress ?? c.externalAccountId}`;
}

export const GOOGLE_PRODUCTS = ['google-calendar', 'gmail', 'google-tasks'] as const;
export const MICROSOFT_PRODUCTS = ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo'] as const;
export type GoogleProductKey = (typeof GOOGLE_PRODUCTS)[number];
export type MicrosoftProductKey = (typeof MICROSOFT_PRODUCTS)[number];

/**
 * The consent page that reconnects a connection: HubSpot's, or Google's or Microsoft's for every
 * product of that account still connected (one sign-in gives them all new tokens).
 */
export function reconnectTarget(
  connection: { provider: string; externalAccountId: string },
  all: readonly { provider: string; externalAccountId: string; status: string }[],
):
  | { provider: 'hubspot' }
  | { provider: 'google'; products: GoogleProductKey[] }
  | { provider: 'microsoft'; products: MicrosoftProductKey[] } {
  if (connection.provider === 'hubspot') return { provider: 'hubspot' };
  const ofAccount = <P extends string>(suite: readonly P[]): P[] => {
    const products = suite.filter((product) =>
      all.some(
        (c) =>
          c.provider === product &&
          c.externalAccountId === connection.externalAccountId &&
          c.status !== 'disconnected',
      ),
    );
    return products.length > 0 ? products : [connection.provider as P];
  };
  if (connection.provider.startsWith('microsoft-'))
    return { provider: 'microsoft', products: ofAccount(MICROSOFT_PRODUCTS) };
  return { provider: 'google', products: ofAccount(GOOGLE_PRODUCTS) };
}
