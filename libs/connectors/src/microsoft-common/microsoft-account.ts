import { err, ok } from '@syncline/core';
import type {
  AccountCredentials,
  ConnectorResult,
  ProvenAccount,
  ProviderEndpoints,
} from '../contract/connector';
import { graphClient } from './graph-call';
import { mapGraphError, toGraphFailure } from './graph-error.mapper';

/** The tenant every personal Microsoft account (outlook.com, hotmail.com) belongs to. */
export const PERSONAL_ACCOUNTS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

/** The account id Syncline keeps for a Microsoft user: tenant and object id, which never change. */
export const microsoftAccountId = (tenantId: string, objectId: string): string =>
  `${tenantId.toLowerCase()}:${objectId.toLowerCase()}`;

/**
 * Whose Microsoft account the access token opens, as Graph says: `GET /me` names the user by
 * object id (`oid`), `GET /organization` the tenant (`tid`; none for a personal account, whose
 * tenant is the consumers' one). Both need User.Read, which the connect flow asks for. The
 * sign-in name is not the key: it can change, the object id cannot.
 */
export async function identifyMicrosoftAccount(
  credentials: AccountCredentials,
  endpoints: ProviderEndpoints,
): Promise<ConnectorResult<ProvenAccount>> {
  if (credentials.accessToken === undefined || credentials.privateAppToken !== undefined)
    return err({ code: 'Validation', message: 'Microsoft credentials need an access token' });
  const client = graphClient(endpoints.microsoftGraphUrl, credentials.accessToken);
  let me: { id?: unknown; mail?: unknown; userPrincipalName?: unknown };
  let organization: { value?: { id?: unknown }[] };
  try {
    me = (await client.api('/me').select('id,mail,userPrincipalName').get()) as typeof me;
    organization = (await client.api('/organization').select('id').get()) as { value?: { id?: unknown }[] };
  } catch (error) {
    const failure = toGraphFailure(error);
    if (!failure) throw error;
    const mapped = mapGraphError(failure);
    if (failure.status === 403)
      return err({
        code: 'Validation',
        message: `Microsoft Graph would not name the account: the token was not granted User.Read (${mapped.message})`,
        status: 403,
      });
    return err(
      mapped.code === 'AuthRevoked'
        ? { ...mapped, message: `Microsoft refused the access token (${failure.status}): ${mapped.message}` }
        : mapped,
    );
  }
  if (typeof me.id !== 'string' || me.id === '')
    return err({ code: 'Validation', message: "Microsoft Graph's /me named no user id" });
  const tenants = (organization.value ?? [])
    .map((o) => o.id)
    .filter((id): id is string => typeof id === 'string');
  if (tenants.length > 1)
    return err({
      code: 'Validation',
      message: `Microsoft Graph named ${tenants.length} organizations for one user`,
    });
  // The mailbox's address (`mail`), else the sign-in name, which is an address too.
  const address = [me.mail, me.userPrincipalName].find(
    (a): a is string => typeof a === 'string' && a.includes('@'),
  );
  return ok({
    accountId: microsoftAccountId(tenants[0] ?? PERSONAL_ACCOUNTS_TENANT, me.id),
    proof: 'microsoft_graph_me',
    ...(address ? { address: address.toLowerCase() } : {}),
  });
}
