import type { InboundChange } from '@syncline/conflicts';

export const WORKLOAD_WORKSPACE = '0190a000-0000-7000-8000-000000000001';

/**
 * The deal workload both merge benches drive: three connections editing 1–3 of eight fields
 * of a deal at a time, 80 % of the changes on a hot fifth of the entities, and about 10 %
 * re-delivering values the source had already sent. Seeded (mulberry32), so runs compare.
 */
export function dealWorkload(entities: number, seed: number) {
  const connections = [1, 2, 3].map((n) => `0190a000-0000-7000-8000-00000000000${n}`);
  const fields = ['stage', 'owner', 'amount', 'closeDate', 'name', 'pipeline', 'priority', 'nextStep'];
  const entityIds = Array.from(
    { length: entities },
    (_, i) => `0190b000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`,
  );
  let state = seed;
  const rand = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const hot = Math.floor(entities / 5);
  const lastSent = new Map<string, Record<string, unknown>>();

  /** The i-th inbound change of the stream. */
  const next = (i: number): InboundChange => {
    const entity = rand() < 0.8 ? Math.floor(rand() * hot) : hot + Math.floor(rand() * (entities - hot));
    const entityId = entityIds[entity]!;
    const connectionId = connections[Math.floor(rand() * 3)]!;
    const key = `${entityId}:${connectionId}`;
    const previous = lastSent.get(key);
    let changed: Record<string, unknown>;
    if (previous !== undefined && rand() < 0.1) {
      changed = previous;
    } else {
      changed = {};
      const n = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < n; k++) {
        const field = fields[Math.floor(rand() * fields.length)]!;
        changed[field] =
          field === 'amount' ? Math.floor(rand() * 100_000) : `${field}-${Math.floor(rand() * 50)}`;
      }
      lastSent.set(key, changed);
    }
    return {
      entityId,
      workspaceId: WORKLOAD_WORKSPACE,
      entityType: 'deal',
      source: { kind: 'connection', id: connectionId },
      eventKey: `${connectionId.slice(-1)}:${i}`,
      eventTime: new Date(1_790_000_000_000 + i * 50),
      fields: changed,
    };
  };
  return { connections, entityIds, fields, next };
}
