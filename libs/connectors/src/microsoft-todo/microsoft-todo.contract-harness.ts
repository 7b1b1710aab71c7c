import { randomUUID } from 'node:crypto';
import type {
  ContractHarness,
  HarnessAccount,
  LoggedRequest,
  NotApplicable,
  WebhookCase,
} from '../contract/testing/harness';
import {
  MicrosoftContractSupport,
  type MicrosoftHarnessOptions,
} from '../microsoft-common/testing/microsoft-contract-support';
import type { MicrosoftTestKit, MicrosoftUser } from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftTodoConnector } from './microsoft-todo.connector';

/** The To Do state view of the control API (`GET …/users/{upn}/todo/tasks`). */
export interface TodoState {
  lists: { id: string; wellknownListName: string; tasks: { id: string; title: string }[] }[];
  deletedListIds: string[];
  deletedTaskIds: string[];
}

/** The user's To Do as stored, and the default list's id. */
export async function todoState(kit: MicrosoftTestKit, user: MicrosoftUser): Promise<TodoState> {
  return kit.state<TodoState>(user, 'todo/tasks');
}

export async function defaultListId(kit: MicrosoftTestKit, user: MicrosoftUser): Promise<string> {
  const found = (await todoState(kit, user)).lists.find((l) => l.wellknownListName === 'defaultList');
  if (!found) throw new Error(`${user.upn} has no default To Do list`);
  return found.id;
}

/** A task created as the user in To Do (control API), in `listId` or the default list; its external id. */
export async function seedTask(
  kit: MicrosoftTestKit,
  user: MicrosoftUser,
  body: Record<string, unknown>,
  listId?: string,
): Promise<string> {
  const list = listId ?? (await defaultListId(kit, user));
  const task = (await kit.ui<{ id: string }>(user, 'POST', 'todo/tasks', { ...body, listId: list })).body;
  return `${list}/${task.id}`;
}

export const taskIdOf = (externalId: string): string => externalId.slice(externalId.indexOf('/') + 1);

/** Whether a logged Graph request creates a task (a POST on a list's tasks collection). */
export const isTaskCreate = (r: LoggedRequest): boolean =>
  r.method === 'POST' && /^\/v1\.0\/me\/todo\/lists\/[^/]+\/tasks(\?|$)/.test(r.path);

/** The notifications of a received webhook body (empty when it is not one). */
export function notificationsIn(rawBody: string): Record<string, unknown>[] {
  try {
    const value = (JSON.parse(rawBody) as { value?: unknown }).value;
    return Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
  } catch {
    return [];
  }
}

const NO_TIMESTAMP: NotApplicable = {
  notApplicable: 'Graph notifications carry no signed timestamp; the clientState is their only proof',
};
const NO_BODY_SIGNATURE: NotApplicable = {
  notApplicable:
    'Graph signs no notification body (without resource data it names only ids, and the pull reads the truth)',
};

/** The shared contract suite's view of Microsoft To Do on the emulator. */
export class MicrosoftTodoContractHarness implements ContractHarness {
  readonly name = 'microsoft-todo';
  readonly connector = createMicrosoftTodoConnector({ pageSize: 25, retry: { baseDelayMs: 20 } });
  readonly entityType = 'task' as const;
  readonly backfillSize = 150;
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
    const listId = await defaultListId(kit, user);
    const live = async () =>
      (await todoState(kit, user)).lists.flatMap((l) => l.tasks.map((t) => ({ l, t })));
    const seed = async (count: number) => {
      const ids: string[] = [];
      for (let n = 0; n < count; n++) ids.push(await seedTask(kit, user, { title: `Task ${n}` }, listId));
      return ids;
    };
    return {
      context,
      webhookContext: () => ({ connectionId, workspaceId }),
      seed,
      async changeRemote(externalId) {
        await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(externalId)}`, { title: `Changed ${Date.now()}` });
      },
      async deleteRemote(externalId) {
        await kit.ui(user, 'DELETE', `todo/tasks/${taskIdOf(externalId)}`);
      },
      async remoteRecord(externalId) {
        return (await live()).find(({ l, t }) => `${l.id}/${t.id}` === externalId)?.t;
      },
      async remoteCount() {
        return (await live()).length;
      },
      sampleFields: (n) => ({
        title: `Created by Syncline ${n}`,
        notes: `from the contract suite ${n}`,
        dueAt: '2030-03-01T00:00:00.000Z',
      }),
      async invalidateCursor() {
        await kit.fault({ kind: 'invalidate-cursors', account: user.upn, count: 1 });
        return { kind: 'remote' };
      },
      async webhook(): Promise<WebhookCase> {
        const token = randomUUID();
        const sub = await connector.subscribe!(context(), receiver.url, token);
        if (!sub.ok) throw new Error(`${sub.error.code}: ${sub.error.message}`);
        const [externalId] = await seed(1);
        const valid = await receiver.waitFor((r) =>
          notificationsIn(r.rawBody).some(
            (n) => n.subscriptionId === sub.value.id && n.changeType === 'created',
          ),
        );
        const forged = JSON.stringify({
          value: notificationsIn(valid.rawBody).map((n) => ({ ...n, clientState: 'forged' })),
        });
        return {
          valid,
          secrets: { channels: [{ id: sub.value.id, token }] },
          externalId: externalId!,
          expectedKind: 'pull',
          forgeries: {
            badSignature: { ...valid, rawBody: forged },
            staleTimestamp: NO_TIMESTAMP,
            tamperedBody: NO_BODY_SIGNATURE,
          },
        };
      },
      async injectFault(kind, count) {
        await kit.fault({ kind, account: user.upn, count });
      },
      async revokeToken() {
        await kit.fault({ kind: 'revoke-token', account: user.upn, count: 1 });
      },
      requests: () => kit.requests(user),
      isCreateRequest: isTaskCreate,
      close: () => connection.close(),
    };
  }
}
