/**
 * Unsaved field edits, kept in sessionStorage per record and field, so that a sign-in
 * redirect (a 401 mid-edit) and the way back do not lose them. The idempotency key is kept
 * with the draft: a retry of the same draft is the same edit.
 */
export interface Draft {
  /** The input's text. */
  text: string;
  /** The record version the draft was made on (`If-Match`). */
  version: number;
  /** The key of the last attempt, and what it sent (version and text): reused only for the same. */
  idempotencyKey: string | null;
  keyFor: string | null;
}

const PREFIX = 'syncline.draft';
const keyOf = (recordId: string, field: string) => `${PREFIX}:${recordId}:${field}`;

function storage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null; // storage blocked: drafts live only as long as the page
  }
}

export function readDraft(recordId: string, field: string): Draft | null {
  const raw = storage()?.getItem(keyOf(recordId, field));
  if (raw === null || raw === undefined) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<Draft>;
    if (typeof parsed.text !== 'string' || typeof parsed.version !== 'number') return null;
    return {
      text: parsed.text,
      version: parsed.version,
      idempotencyKey: typeof parsed.idempotencyKey === 'string' ? parsed.idempotencyKey : null,
      keyFor: typeof parsed.keyFor === 'string' ? parsed.keyFor : null,
    };
  } catch {
    return null;
  }
}

export function writeDraft(recordId: string, field: string, draft: Draft): void {
  try {
    storage()?.setItem(keyOf(recordId, field), JSON.stringify(draft));
  } catch {
    // full or blocked: the draft still lives in the page
  }
}

export function clearDraft(recordId: string, field: string): void {
  storage()?.removeItem(keyOf(recordId, field));
}

const attempt = (draft: Draft) => `${draft.version}:${draft.text}`;

/**
 * The key for sending `draft` now: the last one for the same text on the same version (a
 * retry), else a new one (a new attempt: another text, or "Apply mine" on a newer version).
 */
export function attemptKey(draft: Draft): Draft & { idempotencyKey: string } {
  if (draft.idempotencyKey !== null && draft.keyFor === attempt(draft))
    return { ...draft, idempotencyKey: draft.idempotencyKey };
  return { ...draft, idempotencyKey: crypto.randomUUID(), keyFor: attempt(draft) };
}
