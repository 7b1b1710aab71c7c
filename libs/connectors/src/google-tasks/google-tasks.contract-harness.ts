import type { ContractHarness, HarnessAccount, LoggedRequest } from '../contract/testing/harness';
import {
  GoogleContractSupport,
  type GoogleHarnessOptions,
} from '../google-common/testing/google-contract-support';
import { googleBudgetLimits } from '../shared/rate-budget';
import { createGoogleTasksConnector } from './google-tasks.connector';

/** The emulator's default Tasks quota, which every contract account keeps. */
const TASKS_PER_MINUTE = 600;

interface StoredTask {
  id: string;
  tasklist: string;
  deleted?: boolean;
}

const CURSOR_REASON =
  'Google Tasks has no sync token that can expire (pulls filter on updatedMin); a cursor of an ' +
  'older connector version, which the connector refuses, takes the same reset path';

/** The shared contract suite's view of Google Tasks on the emulator: no push, a local cursor. */
export class GoogleTasksContractHarness implements ContractHarness {
  readonly name = 'google-tasks';
  readonly connector = createGoogleTasksConnector({
    pageSize: 25,
    overlapMs: 1_000,
    retry: { baseDelayMs: 20 },
  });
  readonly entityType = 'task' as const;
  readonly backfillSize = 150;
  readonly notApplicable = {
    webhooks: 'Google Tasks has no push notifications (no watch API); changes are only pulled',
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
    const { kit } = this.support;
    const user = await kit.createUser(label, {
      rateLimitStatus: 429,
      limits: { tasksPerMinute: TASKS_PER_MINUTE },
    });
    const connection = this.support.connection(
      user,
      label,
      googleBudgetLimits({ perUserPerMinute: TASKS_PER_MINUTE }),
    );
    const { connectionId, workspaceId, context } = connection;
    const taskId = (externalId: string) => externalId.split('/')[1]!;
    const all = () => kit.state<StoredTask[]>(user, 'tasks');
    const live = async () => (await all()).filter((t) => !t.deleted);
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      async seed(count) {
        const ids: string[] = [];
        for (let n = 0; n < count; n++) {
          const t = (
            await kit.ui<{ id: string; selfLink: string }>(user, 'POST', 'tasks', { title: `Task ${n}` })
          ).body;
          const list = /\/lists\/([^/]+)\/tasks\//.exec(t.selfLink)?.[1];
          if (!list) throw new Error(`no list in selfLink ${t.selfLink}`);
          ids.push(`${list}/${t.id}`);
        }
        return ids;
      },
      async changeRemote(externalId) {
        // updatedMin has millisecond resolution: make sure the edit lands after the cursor's time.
        await new Promise((r) => setTimeout(r, 5));
        await kit.ui(user, 'PATCH', `tasks/${taskId(externalId)}`, { title: `Changed ${Date.now()}` });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `tasks/${taskId(externalId)}`);
      },
      async remoteRecord(externalId) {
        const found = (await live()).find((t) => `${t.tasklist}/${t.id}` === externalId);
        return found as Record<string, unknown> | undefined;
      },
      async remoteCount() {
        return (await live()).length;
      },
      sampleFields: (n) => ({
        title: `Created by Syncline ${n}`,
        notes: `from the contract suite ${n}`,
        dueAt: '2030-03-01T00:00:00.000Z',
      }),
      async invalidateCursor(current) {
        return { kind: 'local', cursor: { ...current, v: 0 }, reason: CURSOR_REASON };
      },
      async webhook() {
        throw new Error('google-tasks sends no notifications: the webhook check is not applicable');
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
      isCreateRequest: (r) => r.method === 'POST' && /^\/tasks\/v1\/lists\/[^/]+\/tasks(\?|$)/.test(r.path),
      close: () => connection.close(),
    };
  }
}
