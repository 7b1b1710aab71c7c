import type { Labels } from '../auth/actor-labels';
import type { ActorKind } from '../auth/principal';

interface Source {
  kind: string;
  id: string;
}

/** Every source named by these provenance maps: what ActorLabels.resolve needs, for one query per kind. */
export function sourcesOf(provenances: Iterable<unknown>): { actors: string[]; connections: string[] } {
  const actors = new Set<string>();
  const connections = new Set<string>();
  for (const provenance of provenances) {
    for (const entry of Object.values(asRecord(provenance))) {
      const source = sourceOf(entry);
      if (!source) continue;
      (source.kind === 'connection' ? connections : actors).add(source.id);
    }
  }
  return { actors: [...actors], connections: [...connections] };
}

/** The provenance map with each source labelled: a member's name, a key's name, a connection's account. */
export function labelProvenance<T>(
  provenance: Record<string, T>,
  labels: Labels,
): Record<string, T & { source: Source & { label: string | null; actorKind: ActorKind | null } }> {
  return Object.fromEntries(
    Object.entries(provenance).map(([field, entry]) => {
      const source = sourceOf(entry) ?? { kind: 'user', id: '' };
      return [field, { ...entry, source: { ...source, ...labels.source(source) } }];
    }),
  );
}

function sourceOf(entry: unknown): Source | undefined {
  const source = asRecord(entry).source;
  const { kind, id } = asRecord(source);
  return typeof kind === 'string' && typeof id === 'string' ? { kind, id } : undefined;
}

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
