import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { fieldSpec } from '../../../lib/fields';
import { type RecordType, type RecordView, recordKeys, useEditRecordMutation } from '../api';
import { attemptKey, clearDraft, type Draft, readDraft, writeDraft } from '../utils/drafts';
import { fromInputText, toInputText } from '../utils/format';

/** Where an inline edit of one field stands. */
export type FieldEditState =
  | { mode: 'view' }
  | { mode: 'editing'; draft: Draft; error: unknown }
  | { mode: 'saving'; draft: Draft }
  /** 202: accepted, shown as "Saving…" until a version above `version` arrives. */
  | { mode: 'pending'; version: number; text: string; slow: boolean }
  /** 412: the record changed since the draft; theirs is the record as refetched. */
  | { mode: 'stale'; draft: Draft; applying: boolean; error: unknown };

/** While a 202 waits to be merged, the record is read again this often (the live stream is usually first). */
const PENDING_POLL_MS = 2_000;
/** After this long a 202 still waiting says so: the sync stage is behind. */
const PENDING_SLOW_MS = 15_000;

/**
 * One field's inline edit: PATCH with `If-Match` and an idempotency key; 200 caches the
 * record, 202 waits for a higher version, 412 refetches and asks (Keep theirs / Apply mine).
 * The draft lives in sessionStorage until it is saved or dropped.
 */
export function useFieldEdit(type: RecordType, record: RecordView, field: string) {
  const queryClient = useQueryClient();
  const spec = fieldSpec(type, field);
  const recordId = record.id;
  const edit = useEditRecordMutation(type, recordId);
  const [state, setState] = useState<FieldEditState>(() => {
    const draft = readDraft(recordId, field);
    return draft === null ? { mode: 'view' } : { mode: 'editing', draft, error: null };
  });

  // The 202's edit is in once a newer version of the record arrives (live event or refetch).
  const pendingVersion = state.mode === 'pending' ? state.version : null;
  useEffect(() => {
    if (pendingVersion === null) return;
    if (record.version > pendingVersion) {
      setState({ mode: 'view' });
      return;
    }
    const timer = setInterval(
      () => void queryClient.invalidateQueries({ queryKey: recordKeys.detail(type, recordId), exact: true }),
      PENDING_POLL_MS,
    );
    const slow = setTimeout(
      () => setState((current) => (current.mode === 'pending' ? { ...current, slow: true } : current)),
      PENDING_SLOW_MS,
    );
    return () => {
      clearInterval(timer);
      clearTimeout(slow);
    };
  }, [pendingVersion, record.version, queryClient, type, recordId]);

  const start = useCallback(() => {
    const draft: Draft = {
      text: toInputText(spec, record.fields[field]),
      version: record.version,
      idempotencyKey: null,
      keyFor: null,
    };
    writeDraft(recordId, field, draft);
    setState({ mode: 'editing', draft, error: null });
  }, [spec, record, recordId, field]);

  const change = useCallback(
    (text: string) =>
      setState((current) => {
        if (current.mode !== 'editing') return current;
        const draft = { ...current.draft, text };
        writeDraft(recordId, field, draft);
        return { mode: 'editing', draft, error: null };
      }),
    [recordId, field],
  );

  const drop = useCallback(() => {
    clearDraft(recordId, field);
    setState({ mode: 'view' });
  }, [recordId, field]);

  const send = useCallback(
    async (draft: Draft, from: 'editing' | 'stale') => {
      const attempt = attemptKey(draft);
      writeDraft(recordId, field, attempt);
      setState(
        from === 'editing'
          ? { mode: 'saving', draft: attempt }
          : { mode: 'stale', draft: attempt, applying: true, error: null },
      );
      try {
        const outcome = await edit.mutateAsync({
          fields: { [field]: fromInputText(spec, attempt.text) },
          version: attempt.version,
          idempotencyKey: attempt.idempotencyKey,
        });
        switch (outcome.kind) {
          case 'applied':
            clearDraft(recordId, field);
            setState({ mode: 'view' });
            return;
          case 'accepted':
            clearDraft(recordId, field);
            setState({ mode: 'pending', version: attempt.version, text: attempt.text, slow: false });
            return;
          case 'stale':
            // Theirs first, then the choice; never a blind retry.
            await queryClient.refetchQueries({ queryKey: recordKeys.detail(type, recordId), exact: true });
            setState({ mode: 'stale', draft: attempt, applying: false, error: null });
            return;
        }
      } catch (error) {
        // The draft and its key stay: Save again is a retry of the same edit.
        setState(
          from === 'editing'
            ? { mode: 'editing', draft: attempt, error }
            : { mode: 'stale', draft: attempt, applying: false, error },
        );
      }
    },
    [edit, field, spec, recordId, queryClient, type],
  );

  const save = useCallback(() => {
    if (state.mode === 'editing') void send(state.draft, 'editing');
  }, [state, send]);

  /** 412: send the draft again on the version now shown (a new attempt, so a new key). */
  const applyMine = useCallback(() => {
    if (state.mode === 'stale') void send({ ...state.draft, version: record.version }, 'stale');
  }, [state, send, record.version]);

  return { state, spec, start, change, save, cancel: drop, keepTheirs: drop, applyMine };
}
