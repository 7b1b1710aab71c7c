import { randomUUID } from 'node:crypto';
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
import type { GoogleUser } from '../google-common/testing/google-test-kit';
import { googleBudgetLimits } from '../shared/rate-budget';
import { createGoogleCalendarConnector } from './google-calendar.connector';

/** The emulator's default Calendar quota, which every contract account keeps. */
const CALENDAR_PER_MINUTE = 600;

/** The shared contract suite's view of Google Calendar on the emulator. */
export class GoogleCalendarContractHarness implements ContractHarness {
  readonly name = 'google-calendar';
  readonly connector = createGoogleCalendarConnector({ pageSize: 50, retry: { baseDelayMs: 20 } });
  readonly entityType = 'meeting' as const;
  readonly backfillSize = 300;
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
    const user: GoogleUser = await kit.createUser(label, {
      rateLimitStatus: 429,
      limits: { calendarPerMinute: CALENDAR_PER_MINUTE },
    });
    const connection = this.support.connection(
      user,
      label,
      googleBudgetLimits({ perUserPerMinute: CALENDAR_PER_MINUTE }),
    );
    const { connectionId, workspaceId, context } = connection;
    const event = (n: number) => ({
      summary: `Seeded ${n}`,
      start: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T10:00:00Z` },
      end: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T11:00:00Z` },
    });
    const seed = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++)
        ids.push((await kit.ui<{ id: string }>(user, 'POST', 'calendar/events', event(n))).body.id);
      return ids;
    };
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      seed,
      async changeRemote(externalId) {
        await kit.ui(user, 'PATCH', `calendar/events/${externalId}`, { summary: `Changed ${Date.now()}` });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `calendar/events/${externalId}`);
      },
      async remoteRecord(externalId) {
        const events = await kit.state<{ id: string; status: string }[]>(user, 'calendar/events');
        return events.find((e) => e.id === externalId && e.status !== 'cancelled');
      },
      async remoteCount() {
        return (await kit.state<{ status: string }[]>(user, 'calendar/events')).filter(
          (e) => e.status !== 'cancelled',
        ).length;
      },
      sampleFields: (n) => ({
        title: `Created by Syncline ${n}`,
        startAt: '2030-03-01T09:00:00.000Z',
        endAt: '2030-03-01T10:00:00.000Z',
        attendees: [{ email: `guest${n}@example.com`, responseStatus: 'needsAction' }],
      }),
      async invalidateCursor() {
        await kit.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
        return { kind: 'remote' };
      },
      async webhook(): Promise<WebhookCase> {
        const token = randomUUID();
        const sub = await connector.subscribe!(context(), `${receiver.url}/webhooks/google-calendar`, token);
        if (!sub.ok) throw new Error(sub.error.message);
        const [id] = await seed(1);
        const valid = await receiver.waitFor(
          (r) =>
            r.headers['x-goog-channel-id'] === sub.value.id &&
            r.headers['x-goog-resource-state'] === 'exists',
        );
        const secrets = {
          channels: [
            {
              id: sub.value.id,
              token,
              ...(sub.value.resourceId ? { resourceId: sub.value.resourceId } : {}),
            },
          ],
        };
        const na = { notApplicable: 'Calendar notifications are bodiless and carry no timestamp signature' };
        return {
          valid,
          secrets,
          externalId: id!,
          expectedKind: 'pull',
          forgeries: {
            badSignature: { ...valid, headers: { ...valid.headers, 'x-goog-channel-token': 'forged' } },
            staleTimestamp: na,
            tamperedBody: na,
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
      isCreateRequest: (r) =>
        r.method === 'POST' && /^\/calendar\/v3\/calendars\/[^/]+\/events(\?|$)/.test(r.path),
      close: () => connection.close(),
    };
  }
}
