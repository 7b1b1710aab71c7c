import { GraphError } from '../graph-errors';
import type { Mailbox } from '../microsoft-state';
import type { MailboxChange } from './mailbox-change';

/** What a subscription's resource names in the mailbox. */
export type ResourceTarget =
  | { area: 'events' }
  /** No folder: every message of the mailbox (`/me/messages`). */
  | { area: 'messages'; folderId?: string }
  | { area: 'tasks'; listId: string };

const unsupported = (resource: string) =>
  new GraphError(400, 'InvalidRequest', `The resource '${resource}' is not supported for subscriptions.`);

/**
 * `/me/events`, `/me/messages`, `/me/mailFolders('inbox')/messages` (or `/{id}/messages`),
 * `/me/todo/lists/{id}/tasks`, with or without the leading slash. A folder or list that does
 * not exist is a 404, as Graph answers.
 */
export function parseResource(resource: string, box: Mailbox): ResourceTarget {
  const path = resource.replace(/^\//, '');
  if (/^me\/events$/i.test(path)) return { area: 'events' };
  if (/^me\/messages$/i.test(path)) return { area: 'messages' };
  const folder = /^me\/mailFolders(?:\('([^'/]+)'\)|\/([^/]+))\/messages$/i.exec(path);
  if (folder) return { area: 'messages', folderId: box.mail.folder((folder[1] ?? folder[2])!).id };
  const list = /^me\/todo\/lists\/([^/]+)\/tasks$/i.exec(path);
  if (list) return { area: 'tasks', listId: box.todo.list(list[1]!).id };
  throw unsupported(resource);
}

export function targets(target: ResourceTarget, change: MailboxChange): boolean {
  switch (change.area) {
    case 'events':
      return target.area === 'events';
    case 'messages':
      return (
        target.area === 'messages' && (target.folderId === undefined || target.folderId === change.folderId)
      );
    case 'tasks':
      return target.area === 'tasks' && target.listId === change.listId;
  }
}

/** The changed item as a notification names it: `resource` relative to Graph's root, and `resourceData`. */
export function changedItem(
  userId: string,
  change: MailboxChange,
  immutableIds: boolean,
): { resource: string; resourceData: Record<string, string> } {
  const [type, resource, id] =
    change.area === 'events'
      ? ['#Microsoft.Graph.Event', `Users/${userId}/Events/${change.id}`, change.id]
      : change.area === 'messages'
        ? (() => {
            const messageId = immutableIds ? change.immutableId : change.id;
            return ['#Microsoft.Graph.Message', `Users/${userId}/Messages/${messageId}`, messageId] as const;
          })()
        : [
            '#Microsoft.Graph.todoTask',
            `Users/${userId}/todo/lists/${change.listId}/tasks/${change.id}`,
            change.id,
          ];
  return {
    resource,
    resourceData: {
      '@odata.type': type,
      '@odata.id': resource,
      '@odata.etag': `W/"${change.changeKey}"`,
      id,
    },
  };
}
