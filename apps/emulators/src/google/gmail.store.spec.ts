import { describe, expect, it } from 'vitest';
import { GmailStore, type IncomingMail } from './gmail.store';
import { GoogleApiError } from './google-errors';
import { SeededRandom } from './google-ids';

const mail = (n: number, extra: Partial<IncomingMail> = {}): IncomingMail => ({
  from: `lee${n}@example.com`,
  to: ['dana@example.com'],
  cc: [],
  subject: `S${n}`,
  text: `body ${n}`,
  date: new Date(Date.UTC(2030, 0, 1, 0, n)).toISOString(),
  ...extra,
});

function makeStore() {
  const touched: string[][] = [];
  const store = new GmailStore('dana@example.com', {
    rng: new SeededRandom(3),
    now: () => Date.UTC(2030, 0, 2),
    onChange: (labels) => touched.push(labels),
  });
  return { store, touched };
}

const history = { historyTypes: [], maxResults: 100 };

describe('GmailStore', () => {
  it('records history with gaps, pages it, and omits `history` when nothing changed', () => {
    const { store, touched } = makeStore();
    const start = store.historyId;
    expect(store.listHistory({ ...history, startHistoryId: start }, undefined)).toEqual({
      historyId: String(start),
    });
    const ids = [1, 2, 3].map((n) => store.deliver(mail(n)).id);
    const first = store.listHistory({ ...history, startHistoryId: start, maxResults: 2 }, undefined);
    expect(first.history?.map((h) => h.messages[0]?.id)).toEqual(ids.slice(0, 2));
    const rest = store.listHistory({ ...history, startHistoryId: start }, first.nextPageToken);
    expect(rest.history?.map((h) => h.messages[0]?.id)).toEqual(ids.slice(2));
    expect(rest.nextPageToken).toBeUndefined();
    expect(touched).toEqual([
      ['INBOX', 'UNREAD'],
      ['INBOX', 'UNREAD'],
      ['INBOX', 'UNREAD'],
    ]);
  });

  it('threads replies, files sent mail under SENT, and forgets history on invalidation', () => {
    const { store } = makeStore();
    const original = store.deliver(mail(1, { messageId: 'root@example.com' }));
    const reply = store.deliver(
      mail(2, { from: 'Dana <dana@example.com>', inReplyTo: '<root@example.com>' }),
    );
    expect(reply.threadId).toBe(original.threadId);
    expect(reply.labelIds).toEqual(['SENT']);
    const before = store.historyId;
    store.invalidateHistory();
    expect(store.historyId).toBeGreaterThan(before);
    expect(() => store.listHistory({ ...history, startHistoryId: before }, undefined)).toThrow(
      GoogleApiError,
    );
    expect(
      store.listHistory({ ...history, startHistoryId: store.historyId }, undefined).history,
    ).toBeUndefined();
  });

  it('records label changes and deletions with their history types', () => {
    const { store } = makeStore();
    const start = store.historyId;
    const { id } = store.deliver(mail(1));
    store.modifyLabels(id, ['STARRED'], ['UNREAD']);
    store.remove(id);
    const all = store.listHistory({ ...history, startHistoryId: start }, undefined).history ?? [];
    expect(all.map((h) => Object.keys(h).find((k) => k !== 'id' && k !== 'messages'))).toEqual([
      'messagesAdded',
      'labelsAdded',
      'labelsRemoved',
      'messagesDeleted',
    ]);
    const deleted = store.listHistory(
      { ...history, startHistoryId: start, historyTypes: ['messageDeleted'] },
      undefined,
    );
    expect(deleted.history).toHaveLength(1);
    expect(store.profile().messagesTotal).toBe(0);
  });
});
