import { HttpStatus, Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import {
  type AccountCredentials,
  type AccountProof,
  type ConnectorResult,
  gmailConnector,
  googleCalendarConnector,
  googleTasksConnector,
  hubspotConnector,
  identifyMicrosoftAccount,
  type ProvenAccount,
  type ProviderEndpoints,
} from '@syncline/connectors';
import { type ProviderKey, providerEndpoints } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ConnectionCredentials } from './connections.schemas';

/** How a connection's account was proven: a provider endpoint, or the provider's own OAuth consent. */
export type CredentialsProof = AccountProof | 'oauth_consent';

/** Credentials the provider named the connection's account for. */
export interface ProvenCredentials {
  /** The account as the provider spells it (Google: the address in lower case; Microsoft: `<tid>:<oid>` in lower case); what is stored. */
  externalAccountId: string;
  proof: CredentialsProof;
  /** The address of the person whose account it is (Google, Microsoft), lower case; null for a CRM. */
  address: string | null;
}

type IdentifyAccount = (
  credentials: AccountCredentials,
  endpoints: ProviderEndpoints,
) => Promise<ConnectorResult<ProvenAccount>>;

/**
 * Who names a provider's account: its connector's `identifyAccount`. The three Microsoft
 * products share one account (Graph's `/me` and `/organization`), so one function serves them.
 */
const IDENTIFY: Readonly<Record<ProviderKey, IdentifyAccount>> = {
  hubspot: (credentials, endpoints) => hubspotConnector.identifyAccount(credentials, endpoints),
  'google-calendar': (credentials, endpoints) =>
    googleCalendarConnector.identifyAccount(credentials, endpoints),
  gmail: (credentials, endpoints) => gmailConnector.identifyAccount(credentials, endpoints),
  'google-tasks': (credentials, endpoints) => googleTasksConnector.identifyAccount(credentials, endpoints),
  'microsoft-calendar': identifyMicrosoftAccount,
  'microsoft-mail': identifyMicrosoftAccount,
  'microsoft-todo': identifyMicrosoftAccount,
};

/** HubSpot's portal ids compare as they are; Google's addresses and Microsoft's `<tid>:<oid>` GUIDs without regard to case. */
const sameAccount = (provider: ProviderKey, proven: string, claimed: string): boolean =>
  provider === 'hubspot' ? proven === claimed : proven.toLowerCase() === claimed.toLowerCase();

/**
 * Proves credentials before anything of them is stored: the provider itself must name the
 * account they open (connector `identifyAccount`), and it must be the account claimed. A
 * portal id or an address is no secret, so a claim alone must never route an account's
 * webhooks or records to a workspace. Refusals are the caller's 400s; an unreachable
 * provider is a 503 (nothing stored either way).
 */
@Injectable()
export class AccountProver {
  private readonly endpoints: ProviderEndpoints;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(AccountProver.name) private readonly logger: PinoLogger,
  ) {
    this.endpoints = providerEndpoints(config);
  }

  async prove(
    provider: ProviderKey,
    claimedAccountId: string,
    credentials: ConnectionCredentials,
  ): Promise<ProvenCredentials> {
    const identified = await this.identify(provider, credentials);
    if (!identified.ok) {
      const { code, message, status } = identified.error;
      this.logger.info({ provider, code, status }, 'credentials not proven');
      switch (code) {
        case 'AuthRevoked':
          throw new CodedHttpException(
            HttpStatus.BAD_REQUEST,
            'credentials_refused',
            `${provider} refused these credentials: ${message}`,
          );
        case 'Validation':
          throw new CodedHttpException(
            HttpStatus.BAD_REQUEST,
            'account_unproven',
            `${provider} did not name the account of these credentials: ${message}`,
          );
        default:
          throw new ServiceUnavailableException(
            `could not ask ${provider} whose account these credentials open (${code}); try again`,
          );
      }
    }
    const { accountId, proof } = identified.value;
    if (!sameAccount(provider, accountId, claimedAccountId)) {
      this.logger.warn(
        { provider, claimedAccountId, provenAccountId: accountId },
        'credentials of another account',
      );
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'account_mismatch',
        `these credentials open ${provider} account ${accountId}, not ${claimedAccountId}; nothing was stored`,
      );
    }
    return {
      externalAccountId: provider === 'hubspot' ? claimedAccountId : accountId,
      proof,
      address: identified.value.address ?? null,
    };
  }

  /**
   * Asks the provider, again after a throttle or a passing failure (a mailbox Graph throttles
   * one request in twenty still has its consent restored): at most PROOF_ATTEMPTS asks, waiting
   * what the provider says (Retry-After), never more than MAX_PROOF_WAIT_MS in all, as an admin
   * waits on the answer. A longer wait is the 503 to try again later.
   */
  private async identify(
    provider: ProviderKey,
    credentials: ConnectionCredentials,
  ): ReturnType<IdentifyAccount> {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const identified = await IDENTIFY[provider](credentials, this.endpoints);
      if (identified.ok || attempt >= PROOF_ATTEMPTS || !PASSING.has(identified.error.code))
        return identified;
      const wait = identified.error.retryAfterMs ?? PROOF_BACKOFF_MS * attempt;
      if (waited + wait > MAX_PROOF_WAIT_MS) return identified;
      this.logger.info({ provider, code: identified.error.code, wait }, 'asking again for the account');
      await new Promise((resolve) => setTimeout(resolve, wait));
      waited += wait;
    }
  }
}

/** Failures that pass: asked again (a refusal or a malformed answer is final). */
const PASSING: ReadonlySet<string> = new Set(['RateLimited', 'Transient']);
const PROOF_ATTEMPTS = 3;
const PROOF_BACKOFF_MS = 250;
const MAX_PROOF_WAIT_MS = 3_000;
