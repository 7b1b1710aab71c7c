import { type MicrosoftUser, PERSONAL_TENANT } from '../user.store';
import { type Aadsts, aadsts } from './identity-errors';

/** The `{tenant}` of `/{tenant}/oauth2/v2.0/*`: which accounts the endpoint signs in. */
export type Tenant = 'common' | 'organizations' | 'consumers' | { id: string };

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tenant segment, or undefined for a name the emulator does not know (AADSTS90002). */
export function parseTenant(segment: string): Tenant | undefined {
  const lower = segment.toLowerCase();
  if (lower === 'common' || lower === 'organizations' || lower === 'consumers') return lower;
  return GUID.test(segment) ? { id: lower } : undefined;
}

export const tenantName = (tenant: Tenant): string => (typeof tenant === 'string' ? tenant : tenant.id);

/**
 * Why the endpoint will not sign this user in, if it will not: `common` takes anyone,
 * `organizations` only work accounts, `consumers` only personal ones, a tenant id only its own.
 */
export function refuseUser(tenant: Tenant, user: MicrosoftUser, clientId: string): Aadsts | undefined {
  const personal = user.tenantId.toLowerCase() === PERSONAL_TENANT;
  switch (tenant) {
    case 'common':
      return undefined;
    case 'organizations':
      return personal ? aadsts.wrongAccountType(tenant) : undefined;
    case 'consumers':
      return personal ? undefined : aadsts.wrongAccountType(tenant);
    default:
      return tenant.id === user.tenantId.toLowerCase()
        ? undefined
        : aadsts.userNotInTenant(user.userPrincipalName, user.tenantId, tenant.id, clientId);
  }
}

/** Whether a code got at one endpoint may be redeemed at another: the same, or the user's own tenant. */
export function sameAuthority(acquiredAt: Tenant, redeemedAt: Tenant, user: MicrosoftUser): boolean {
  if (tenantName(acquiredAt) === tenantName(redeemedAt)) return true;
  return typeof redeemedAt !== 'string' && redeemedAt.id === user.tenantId.toLowerCase();
}

/** The `iss` of a user's tokens. */
export const issuerOf = (origin: string, tid: string): string => `${origin}/${tid}/v2.0`;

/** The issuer discovery publishes: a `{tenantid}` template where the endpoint serves many tenants. */
export function publishedIssuer(origin: string, tenant: Tenant): string {
  if (tenant === 'common' || tenant === 'organizations') return `${origin}/{tenantid}/v2.0`;
  return issuerOf(origin, tenant === 'consumers' ? PERSONAL_TENANT : tenant.id);
}
