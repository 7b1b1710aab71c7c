import { describe, expect, it } from 'vitest';
import {
  BEHIND_LAG_EVENTS,
  BEHIND_WATERMARK_SECONDS,
  backfillPercent,
  connectionActions,
  connectionStatus,
  type StatusConnection,
} from './connection-status';

const NOW = Date.parse('2026-12-04T12:00:00Z');

const connection = (
  overrides: Partial<Omit<StatusConnection, 'state'>> & { state?: Partial<StatusConnection['state']> } = {},
): StatusConnection => ({
  status: 'live',
  dryRun: false,
  hasCredentials: true,
  ...overrides,
  state: {
    backfill: { seen: 0, estimatedTotal: null },
    lag: { events: 0 },
    watermarkDelaySeconds: 5,
    ...overrides.state,
  },
});

const label = (c: StatusConnection, health?: Parameters<typeof connectionStatus>[1]) =>
  connectionStatus(c, health, NOW).label;

describe('connectionStatus', () => {
  it('reads each lifecycle status as one label', () => {
    expect(label(connection({ status: 'live' }))).toBe('Live');
    expect(label(connection({ status: 'paused' }))).toBe('Paused');
    expect(label(connection({ status: 'needs_reauth' }))).toBe('Action required');
    expect(label(connection({ status: 'error' }))).toBe('Error');
    expect(label(connection({ status: 'disconnected' }))).toBe('Disconnected');
  });

  it('backfilling: the share read, floored and below 100 until done; no percent without a total', () => {
    const backfilling = (seen: number, estimatedTotal: number | null) =>
      connection({ status: 'backfilling', state: { backfill: { seen, estimatedTotal } } });
    expect(label(backfilling(420, 1000))).toBe('Backfilling 42 %');
    expect(label(backfilling(999, 1000))).toBe('Backfilling 99 %');
    // The provider's total is an estimate: reading past it is not "done".
    expect(label(backfilling(1200, 1000))).toBe('Backfilling 99 %');
    expect(label(backfilling(1200, null))).toBe('Backfilling');
    expect(label(connection({ status: 'pending' }))).toBe('Backfilling 0 %');
    expect(connectionStatus(backfilling(1, 2), undefined, NOW)).toMatchObject({
      kind: 'backfilling',
      tone: 'info',
    });
  });

  it('dry run over the backfill and Live, but not over what needs an admin', () => {
    expect(label(connection({ dryRun: true }))).toBe('Dry run');
    expect(label(connection({ dryRun: true, status: 'backfilling' }))).toBe('Dry run');
    expect(label(connection({ dryRun: true, status: 'needs_reauth' }))).toBe('Action required');
    expect(label(connection({ dryRun: true, status: 'paused' }))).toBe('Paused');
  });

  it('a connection without credentials needs an admin whatever its status says', () => {
    expect(label(connection({ hasCredentials: false }))).toBe('Action required');
    expect(label(connection({ hasCredentials: false, status: 'disconnected' }))).toBe('Disconnected');
  });

  it(`Behind past ${BEHIND_LAG_EVENTS} events to merge or a watermark ${BEHIND_WATERMARK_SECONDS} s old`, () => {
    expect(label(connection({ state: { lag: { events: BEHIND_LAG_EVENTS } } }))).toBe('Live');
    const lagging = connectionStatus(
      connection({ state: { lag: { events: BEHIND_LAG_EVENTS + 1 } } }),
      undefined,
      NOW,
    );
    expect(lagging).toMatchObject({ kind: 'behind', label: 'Behind', tone: 'warning' });
    expect(lagging.detail).toContain('1,001');
    expect(label(connection({ state: { watermarkDelaySeconds: BEHIND_WATERMARK_SECONDS } }))).toBe('Live');
    expect(label(connection({ state: { watermarkDelaySeconds: BEHIND_WATERMARK_SECONDS + 1 } }))).toBe(
      'Behind',
    );
    // No watermark yet (a provider without one): only the lag counts.
    expect(label(connection({ state: { watermarkDelaySeconds: null } }))).toBe('Live');
  });

  it("prefers the health answer's lag and watermark, dated by now", () => {
    const c = connection({ state: { lag: { events: 0 }, watermarkDelaySeconds: 0 } });
    expect(label(c, { lag: { events: BEHIND_LAG_EVENTS + 5 }, watermark: null })).toBe('Behind');
    const old = new Date(NOW - (BEHIND_WATERMARK_SECONDS + 60) * 1000).toISOString();
    const behind = connectionStatus(c, { lag: { events: 0 }, watermark: old }, NOW);
    expect(behind.label).toBe('Behind');
    expect(behind.detail).toContain('11 min');
    const fresh = new Date(NOW - 30_000).toISOString();
    expect(label(c, { lag: { events: 0 }, watermark: fresh })).toBe('Live');
  });
});

describe('backfillPercent', () => {
  it('is null without a usable total', () => {
    expect(backfillPercent(5, null)).toBeNull();
    expect(backfillPercent(5, 0)).toBeNull();
    expect(backfillPercent(0, 10)).toBe(0);
  });
});

describe('connectionActions', () => {
  it('offers what the API accepts in each status', () => {
    const actions = (status: StatusConnection['status'], extra: Partial<StatusConnection> = {}) =>
      connectionActions({ status, dryRun: false, hasCredentials: true, ...extra });
    expect(actions('live')).toEqual({
      pause: true,
      resume: false,
      resync: true,
      reconnect: false,
      disconnect: true,
      dryRunReport: false,
      mappings: true,
    });
    expect(actions('paused')).toMatchObject({ pause: false, resume: true, resync: false });
    expect(actions('error')).toMatchObject({ pause: true, resume: true, resync: true });
    expect(actions('needs_reauth')).toMatchObject({
      resume: false,
      resync: false,
      reconnect: true,
      disconnect: true,
    });
    expect(actions('backfilling', { dryRun: true })).toMatchObject({ dryRunReport: true, pause: true });
    expect(actions('disconnected', { dryRun: true })).toEqual({
      pause: false,
      resume: false,
      resync: false,
      reconnect: false,
      disconnect: false,
      dryRunReport: false,
      mappings: false,
    });
  });
});
