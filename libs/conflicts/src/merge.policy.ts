import { canonicalJson } from '@syncline/core';
import { sourceKey } from './actor';
import type { FieldPolicy, PolicyMap, SourceRef } from './types';

/** One value of a field as the document holds it (one of several when edits were concurrent). */
export interface Candidate {
  /** Automerge op id "counter@actor". */
  opId: string;
  source: SourceRef;
  hlc: number;
  json: string;
}

export interface Resolution {
  json: string;
  /** The candidate credited with the value (for union: the latest contributor). */
  credited: Candidate;
  /** A manual conflict without a decision yet. */
  open: boolean;
}

const LWW: FieldPolicy = { kind: 'lww' };

export const policyFor = (policies: PolicyMap, field: string): FieldPolicy => policies[field] ?? LWW;

/** Later hybrid clock first; equal clocks are broken by source id, larger first. */
export function compareLww(a: Candidate, b: Candidate): number {
  if (a.hlc !== b.hlc) return b.hlc - a.hlc;
  const ka = sourceKey(a.source);
  const kb = sourceKey(b.source);
  return ka < kb ? 1 : ka > kb ? -1 : 0;
}

function rank(policy: Extract<FieldPolicy, { kind: 'priority' }>, source: SourceRef): number {
  const index = policy.order.indexOf(source.kind === 'user' ? 'user' : source.id);
  return index < 0 ? policy.order.length : index;
}

/**
 * Settles the candidates of one field by its policy. Pure: the same candidates give the
 * same answer on every replica and replay, which is why automatic resolutions are not
 * written into the document.
 */
export function resolveField(candidates: readonly Candidate[], policy: FieldPolicy): Resolution {
  const byLww = [...candidates].sort(compareLww);
  const latest = byLww[0];
  if (latest === undefined) throw new Error('resolveField needs at least one candidate');
  if (candidates.length === 1) return { json: latest.json, credited: latest, open: false };
  switch (policy.kind) {
    case 'lww':
      return { json: latest.json, credited: latest, open: false };
    case 'priority': {
      const best = [...byLww].sort((a, b) => rank(policy, a.source) - rank(policy, b.source))[0] ?? latest;
      return { json: best.json, credited: best, open: false };
    }
    case 'manual':
      // Sources that agree leave nothing for a person to settle.
      return { json: latest.json, credited: latest, open: candidates.some((c) => c.json !== latest.json) };
    case 'union': {
      const seen = new Set<string>();
      const merged: unknown[] = [];
      // Oldest first, so a set grows in the order its members arrived.
      for (const candidate of [...byLww].reverse()) {
        const parsed: unknown = JSON.parse(candidate.json);
        for (const item of Array.isArray(parsed) ? parsed : parsed === null ? [] : [parsed]) {
          const key = canonicalJson(item);
          if (seen.has(key)) continue;
          seen.add(key);
          merged.push(item);
        }
      }
      return { json: canonicalJson(merged), credited: latest, open: false };
    }
  }
}
