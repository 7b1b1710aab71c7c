import type { InboundChange, SourceRef } from '../src/types';

export const WS = '0190a000-0000-7000-8000-000000000001';
export const ENTITY = '0190a000-0000-7000-8000-0000000000e1';
export const CRM_A = '0190a000-0000-7000-8000-00000000000a';
export const CRM_B = '0190a000-0000-7000-8000-00000000000b';
export const CRM_C = '0190a000-0000-7000-8000-00000000000c';
export const USER = '0190a000-0000-7000-8000-0000000000f1';
export const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

export const conn = (id: string): SourceRef => ({ kind: 'connection', id });

let counter = 0;

/** An inbound change from a connection; `at` is seconds after T0. */
export function change(
  connectionId: string,
  at: number,
  fields: Record<string, unknown>,
  extra: Partial<InboundChange> = {},
): InboundChange {
  return {
    entityId: ENTITY,
    workspaceId: WS,
    entityType: 'deal',
    source: conn(connectionId),
    eventKey: `${connectionId.slice(-2)}:${at}:${++counter}`,
    eventTime: new Date(T0 + at * 1000),
    fields,
    ...extra,
  };
}
