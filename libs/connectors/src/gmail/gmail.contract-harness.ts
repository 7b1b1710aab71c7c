import { randomBytes } from 'node:crypto';
import type {
  ContractHarness,
  HarnessAccount,
  LoggedRequest,
  WebhookCase,
} from '../contract/testing/harness';
import {
  GoogleContractSupport,
  type GoogleHarnessOptions,
} from '../google-common/testing/google-contract-support';
import { gmailBudgetLimits } from '../shared/rate-budget';
import { createGmailConnector } from './gmail.connector';

/**
 * Quota units per second of every contract mailbox (the emulator's default is Gmail's 250);
 * raised so the paging checks do not spend their time waiting, and the budget matches it.
 */
const GMAIL_UNITS_PER_SECOND = 1000;

interface StoredMessage {
  id: string;
  deleted: boolean;
}

/** The shared contract suite's view of Gmail on the emulator: read-only, push via Pub/Sub. */
export class GmailContractHarness implements ContractHarness {
  readonly name = 'gmail';
  readonly connector = createGmailConnector({ pageSize: 25, retry: { baseDelayMs: 20 } });
  readonly entityType = 'email_activity' as const;
  readonly backfillSize = 120;
  readonly notApplicable = {
    writes: 'Gmail is read-only in Syncline (writable is empty; push answers Validation)',
  };
  private support!: GoogleContractSupport;

  constructor(private readonly options: GoogleHarnessOptions) {}

  async start(): Promise<void> {
    this.support = await GoogleContractSupport.start(this.options);
  }

  async stop(): Promise<void> {
    await this.support.stop();
  }

  async account(label: string): Promise<HarnessAccount> {
    const { kit, receiver } = this.support;
    const connector = this.connector;
    const pushToken = randomBytes(12).toString('hex');
    const pushPath = `/webhooks/gmail/${label}-${randomBytes(4).toString('hex')}`;
    const user = await kit.createUser(label, {
      rateLimitStatus: 429,
      limits: { gmailUnitsPerSecond: GMAIL_UNITS_PER_SECOND },
      // The Pub/Sub push subscription: the shared token rides in the endpoint URL.
      pushUrl: `${receiver.url}${pushPath}?token=${pushToken}`,
    });
    const connection = this.support.connection(
      user,
      label,
      gmailBudgetLimits({ unitsPerSecond: GMAIL_UNITS_PER_SECOND }),
    );
    const { connectionId, workspaceId, context } = connection;
    const seed = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++) {
        const mail = {
          from: `Sender ${n} <sender${n}@example.com>`,
          to: [user.email],
          subject: `Seeded ${n}`,
          text: `body ${n}`,
        };
        ids.push((await kit.ui<{ id: string }>(user, 'POST', 'gmail/messages', mail)).body.id);
      }
      return ids;
    };
    const live = async () =>
      (await kit.state<StoredMessage[]>(user, 'gmail/messages')).filter((m) => !m.deleted);
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      seed,
      async changeRemote(externalId) {
        // Messages are immutable; what a user changes is their labels (read, starred, archived).
        await kit.ui(user, 'POST', `gmail/messages/${externalId}/labels`, {
          add: ['STARRED'],
          remove: ['UNREAD'],
        });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `gmail/messages/${externalId}`);
      },
      async remoteRecord(externalId) {
        return (await live()).find((m) => m.id === externalId) as Record<string, unknown> | undefined;
      },
      async remoteCount() {
        return (await live()).length;
      },
      sampleFields: () => {
        throw new Error('gmail is read-only: the write checks are not applicable');
      },
      async invalidateCursor() {
        await kit.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
        return { kind: 'remote' };
      },
      async webhook(): Promise<WebhookCase> {
        const sub = await connector.subscribe!(context(), `${receiver.url}${pushPath}`, pushToken);
        if (!sub.ok) throw new Error(sub.error.message);
        const [id] = await seed(1);
        const valid = await receiver.waitFor((r) => new URL(r.url).pathname === pushPath);
        const forgedUrl = new URL(valid.url);
        forgedUrl.searchParams.set('token', 'forged');
        return {
          valid,
          secrets: { pushBearerToken: pushToken },
          externalId: id!,
          expectedKind: 'pull',
          forgeries: {
            // The emulator's OIDC bearer stays; only the shared push token is wrong.
            badSignature: { ...valid, url: forgedUrl.toString() },
            staleTimestamp: {
              notApplicable: 'the push is authenticated by a shared token, which carries no timestamp',
            },
            tamperedBody: {
              notApplicable: 'the push token does not sign the body; a Gmail push only says "pull"',
            },
          },
        };
      },
      async injectFault(kind, count) {
        await kit.fault({ kind, account: user.email, count });
      },
      async revokeToken() {
        await kit.fault({ kind: 'revoke-token', account: user.email, count: 1 });
      },
      async requests(): Promise<LoggedRequest[]> {
        return kit.requests(user.email);
      },
      isCreateRequest: () => false,
      close: () => connection.close(),
    };
  }
}
