import { randomBytes } from 'node:crypto';
import type {
  ContractHarness,
  HarnessAccount,
  LoggedRequest,
  WebhookCase,
} from '../contract/testing/harness';
import {
  MicrosoftContractSupport,
  type MicrosoftHarnessOptions,
} from '../microsoft-common/testing/microsoft-contract-support';
import { createMicrosoftMailConnector } from './microsoft-mail.connector';

/** A message as the control API's mailbox view holds it. */
interface StoredMessage {
  immutableId: string;
  folder?: string;
  [property: string]: unknown;
}

/** The folders the connector follows: records elsewhere are not the entity type's. */
const FOLLOWED = new Set(['inbox', 'sentitems']);

/** The shared contract suite's view of Outlook mail on the Graph emulator: read-only, Graph webhooks. */
export class MicrosoftMailContractHarness implements ContractHarness {
  readonly name = 'microsoft-mail';
  readonly connector = createMicrosoftMailConnector({ pageSize: 25, retry: { baseDelayMs: 20 } });
  readonly entityType = 'email_activity' as const;
  readonly backfillSize = 120;
  readonly notApplicable = {
    writes: 'Outlook mail is read-only in Syncline (writable is empty; push answers Validation)',
  };
  private support!: MicrosoftContractSupport;

  constructor(private readonly options: MicrosoftHarnessOptions) {}

  async start(): Promise<void> {
    this.support = await MicrosoftContractSupport.start(this.options);
  }

  async stop(): Promise<void> {
    await this.support.stop();
  }

  async account(label: string): Promise<HarnessAccount> {
    const { kit, receiver } = this.support;
    const connector = this.connector;
    const user = await kit.createUser(label);
    const connection = this.support.connection(user, label);
    const { connectionId, workspaceId, context } = connection;
    const seed = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++) {
        const mail = {
          from: `Sender ${n} <sender${n}@example.com>`,
          to: [user.upn],
          subject: `Seeded ${n}`,
          body: `body ${n}`,
        };
        ids.push((await kit.ui<StoredMessage>(user, 'POST', 'mail/messages', mail)).body.immutableId);
      }
      return ids;
    };
    const live = async () =>
      (await kit.state<{ messages: StoredMessage[] }>(user, 'mail/messages')).messages.filter((m) =>
        FOLLOWED.has(m.folder ?? ''),
      );
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      seed,
      async changeRemote(externalId) {
        // A received mail is fixed; what its owner changes is its marks (read, flagged), as in Gmail.
        await kit.ui(user, 'PATCH', `mail/messages/${externalId}`, {
          isRead: true,
          flag: { flagStatus: 'flagged' },
        });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `mail/messages/${externalId}`);
      },
      async remoteRecord(externalId) {
        return (await live()).find((m) => m.immutableId === externalId);
      },
      async remoteCount() {
        return (await live()).length;
      },
      sampleFields: () => {
        throw new Error('microsoft-mail is read-only: the write checks are not applicable');
      },
      async invalidateCursor() {
        await kit.fault({ kind: 'invalidate-cursors', account: user.upn, count: 1 });
        return { kind: 'remote' };
      },
      async webhook(): Promise<WebhookCase> {
        const path = `/hook/microsoft-mail/${label}-${randomBytes(4).toString('hex')}`;
        const clientState = randomBytes(16).toString('hex');
        const sub = await connector.subscribe!(
          context(),
          `${new URL(receiver.url).origin}${path}`,
          clientState,
        );
        if (!sub.ok) throw new Error(`${sub.error.code}: ${sub.error.message}`);
        const [id] = await seed(1);
        const valid = await receiver.waitFor((r) => new URL(r.url).pathname === path);
        const forged = JSON.parse(valid.rawBody) as { value: { clientState?: string }[] };
        for (const item of forged.value) item.clientState = randomBytes(16).toString('hex');
        return {
          valid,
          secrets: { channels: [{ id: sub.value.id, token: clientState }] },
          externalId: id!,
          expectedKind: 'pull',
          forgeries: {
            // The same notification under a clientState Graph was never given.
            badSignature: { ...valid, rawBody: JSON.stringify(forged) },
            staleTimestamp: {
              notApplicable:
                'Graph signs no notification: the clientState is a shared secret with no timestamp',
            },
            tamperedBody: {
              notApplicable:
                'Graph signs no body: the clientState only proves the sender, and a notification only says "pull"',
            },
          },
        };
      },
      async injectFault(kind, count) {
        await kit.fault({ kind, account: user.upn, count });
      },
      async revokeToken() {
        await kit.fault({ kind: 'revoke-token', account: user.upn, count: 1 });
      },
      async requests(): Promise<LoggedRequest[]> {
        return kit.requests(user);
      },
      isCreateRequest: () => false,
      close: () => connection.close(),
    };
  }
}
