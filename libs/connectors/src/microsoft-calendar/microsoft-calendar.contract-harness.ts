import { randomUUID } from 'node:crypto';
import type { WebhookRequest } from '../contract/connector';
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
import type { MicrosoftUser } from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftCalendarConnector } from './microsoft-calendar.connector';

const DAY_MS = 86_400_000;

/** A wall-clock time `days` after `from`'s day at `hour` UTC, as Graph's `dateTime` takes it. */
export const wallAt = (from: number, days: number, hour: number): string =>
  new Date(Math.floor(from / DAY_MS) * DAY_MS + days * DAY_MS + hour * 3_600_000).toISOString().slice(0, 19);

/** The subscription ids a notification POST names. */
export const subscriptionIdsOf = (request: WebhookRequest): string[] => {
  const body = JSON.parse(request.rawBody) as { value?: { subscriptionId?: string }[] };
  return (body.value ?? []).map((n) => n.subscriptionId ?? '');
};

interface StoredEvents {
  events: { id: string }[];
  deletedIds: string[];
}

/**
 * The shared contract suite's view of the Outlook calendar on the emulator. Records are
 * seeded a week ahead and written two months ahead: inside the calendar view's range, which
 * reaches a year back and two years ahead of the backfill.
 */
export class MicrosoftCalendarContractHarness implements ContractHarness {
  readonly name = 'microsoft-calendar';
  readonly connector = createMicrosoftCalendarConnector({ pageSize: 50, retry: { baseDelayMs: 20 } });
  readonly entityType = 'meeting' as const;
  readonly backfillSize = 300;
  private readonly from = Date.now();
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
    const { connector, from } = this;
    const user: MicrosoftUser = await kit.createUser(label);
    const connection = this.support.connection(user, label);
    const { connectionId, workspaceId, context } = connection;
    const event = (n: number) => ({
      subject: `Seeded ${n}`,
      start: { dateTime: wallAt(from, 7 + (n % 28), 10), timeZone: 'UTC' },
      end: { dateTime: wallAt(from, 7 + (n % 28), 11), timeZone: 'UTC' },
    });
    const seed = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++)
        ids.push((await kit.ui<{ id: string }>(user, 'POST', 'calendar/events', event(n))).body.id);
      return ids;
    };
    const stored = () => kit.state<StoredEvents>(user, 'calendar/events');
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      seed,
      async changeRemote(externalId) {
        await kit.ui(user, 'PATCH', `calendar/events/${externalId}`, { subject: `Changed ${Date.now()}` });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `calendar/events/${externalId}`);
      },
      async remoteRecord(externalId) {
        return (await stored()).events.find((e) => e.id === externalId);
      },
      async remoteCount() {
        return (await stored()).events.length;
      },
      sampleFields: (n) => ({
        title: `Created by Syncline ${n}`,
        startAt: `${wallAt(from, 60 + n, 9)}.000Z`,
        endAt: `${wallAt(from, 60 + n, 10)}.000Z`,
        attendees: [{ email: `guest${n}@example.com`, responseStatus: 'needsAction' }],
      }),
      async invalidateCursor() {
        await kit.fault({ kind: 'invalidate-cursors', account: user.upn, count: 1 });
        return { kind: 'remote' };
      },
      async webhook(): Promise<WebhookCase> {
        const token = randomUUID();
        const callbackUrl = `${receiver.url}/microsoft-calendar/${randomUUID()}`;
        const sub = await connector.subscribe!(context(), callbackUrl, token);
        if (!sub.ok) throw new Error(sub.error.message);
        const [id] = await seed(1);
        const valid = await receiver.waitFor((r) => subscriptionIdsOf(r).includes(sub.value.id));
        const body = JSON.parse(valid.rawBody) as { value: Record<string, unknown>[] };
        const forgedState = JSON.stringify({
          value: body.value.map((n) => ({ ...n, clientState: 'forged' })),
        });
        const na = (why: string) => ({ notApplicable: why });
        return {
          valid,
          secrets: { channels: [{ id: sub.value.id, token }] },
          externalId: id!,
          expectedKind: 'pull',
          forgeries: {
            badSignature: { ...valid, rawBody: forgedState },
            staleTimestamp: na(
              'Graph notifications carry no signed timestamp; clientState is their only proof',
            ),
            tamperedBody: na(
              'Graph signs no body (without resource data); a body with a wrong clientState is badSignature',
            ),
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
      isCreateRequest: (r) => r.method === 'POST' && /^\/v1\.0\/me\/events(\?|$)/.test(r.path),
      close: () => connection.close(),
    };
  }
}
