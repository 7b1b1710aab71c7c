/** What a change notification can say happened to an item. */
export type ChangeType = 'created' | 'updated' | 'deleted';

/**
 * One write to an item of a mailbox, as the stores report it (from Graph and from the
 * control API's "ui" routes alike), so subscriptions hear of every change in one place.
 */
export type MailboxChange =
  | { area: 'events'; changeType: ChangeType; id: string; changeKey: string }
  | {
      area: 'messages';
      changeType: ChangeType;
      /** The REST id in `folderId`, and the id that survives moves. */
      id: string;
      immutableId: string;
      folderId: string;
      changeKey: string;
    }
  | { area: 'tasks'; changeType: ChangeType; id: string; listId: string; changeKey: string };

export type OnMailboxChange = (change: MailboxChange) => void;

/** For stores made without a listener (unit tests). */
export const ignoreChanges: OnMailboxChange = () => undefined;
