import { EntityDocument } from './entity-document';
import type { MergeStore } from './merge-store';
import type { EntityState, HistoryEntry, PolicyMap } from './types';

/** What a reader outside the merge may ask of one entity's stored document. */
export interface EntityReader {
  /**
   * Every change merged into the entity, newest first: by change time (the source's event
   * time, to the second), and among changes of the same second, each before the changes it
   * followed (causal order, reversed).
   */
  changes(): HistoryEntry[];
  /**
   * The entity as it was at `at` (see `EntityDocument.valueAt`: the changes up to that
   * second, with their causes), or null when no change of it had been merged by then: it
   * did not exist yet.
   */
  stateAt(at: Date, policies: PolicyMap): EntityState | null;
}

/**
 * Reads one entity's stored document once, outside the merge: no engine, no cache and no
 * synced heads (those place a connection's next change; reading them is the costly part of
 * a load, and a reader needs none). The document is freed once `read` has settled, so its
 * WebAssembly memory is reused; the reader must not be kept past that. Null when the entity
 * has no document.
 */
export async function readEntity<T>(
  store: Pick<MergeStore, 'load'>,
  entityId: string,
  read: (reader: EntityReader) => T | Promise<T>,
): Promise<T | null> {
  const stored = await store.load(entityId);
  if (stored === null) return null;
  const doc = EntityDocument.load(entityId, stored.snapshot, stored.chunks);
  let open = true;
  const live = (): EntityDocument => {
    if (!open) throw new Error(`the document of ${entityId} was read and freed; read it again`);
    return doc;
  };
  try {
    return await read({
      changes: () => newestFirst(live().history()),
      stateAt: (at, policies) => {
        const state = live().valueAt(at, policies);
        // Every change sets at least one field, so a state without fields has no change in it.
        return Object.keys(state.values).length === 0 ? null : state;
      },
    });
  } finally {
    open = false;
    doc.free();
  }
}

/** A history in causal order (as `EntityDocument.history` lists it), newest first. */
export function newestFirst(history: readonly HistoryEntry[]): HistoryEntry[] {
  return history
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => b.entry.time.getTime() - a.entry.time.getTime() || b.index - a.index)
    .map(({ entry }) => entry);
}
