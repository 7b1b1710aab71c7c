import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../ui/utils/time';
import { insightsHealth, NOT_REPORTED } from './insights-health';

const NOW = Date.parse('2026-12-12T12:00:00.000Z');

const connection = (over: Partial<Parameters<typeof insightsHealth>[1][number]> = {}) => ({
  id: 'c1',
  provider: 'gmail',
  displayName: 'Ana’s mail',
  externalAccountId: 'ana@acme.test',
  status: 'live' as const,
  dryRun: false,
  hasCredentials: true,
  backfill: { seen: 0, total: null },
  lag: { events: 0 },
  watermark: '2026-12-12T11:59:00.000Z',
  watermarkDelaySeconds: 60,
  lastErrorCode: null,
  ...over,
});

describe('insightsHealth', () => {
  it('dates the watermark and names each holder with its provider, status and own watermark', () => {
    const view = insightsHealth(
      {
        completeUpTo: '2026-12-12T08:00:00.000Z',
        heldBy: [
          { connectionId: 'c1', watermark: '2026-12-12T08:00:00.000Z' },
          { connectionId: 'c2', watermark: null },
        ],
        late: 3,
        sideOutput: 1,
      },
      [
        connection({ status: 'paused' }),
        connection({
          id: 'c2',
          provider: 'google-calendar',
          displayName: null,
          externalAccountId: 'ana@acme.test',
        }),
      ],
      NOW,
    );
    expect(view.completeUpTo).toBe(formatDateTime('2026-12-12T08:00:00.000Z'));
    expect(view.holders).toEqual([
      {
        connectionId: 'c1',
        name: 'Ana’s mail',
        provider: 'Gmail',
        status: { label: 'Paused', tone: 'neutral' },
        watermark: formatDateTime('2026-12-12T08:00:00.000Z'),
      },
      {
        connectionId: 'c2',
        name: 'Google Calendar ana@acme.test',
        provider: 'Google Calendar',
        status: { label: 'Live', tone: 'success' },
        watermark: NOT_REPORTED,
      },
    ]);
    expect(view.late.count).toBe(3);
    expect(view.setAside.count).toBe(1);
    expect(view.late.explanation).toMatch(/after their day had closed/);
    expect(view.setAside.explanation).toMatch(/change no figures/);
  });

  it('says there is no watermark yet, and names a removed holder as such', () => {
    const view = insightsHealth(
      { completeUpTo: null, heldBy: [{ connectionId: 'gone', watermark: null }], late: 0, sideOutput: 0 },
      [connection()],
      NOW,
    );
    expect(view.completeUpTo).toMatch(/^Not yet/);
    expect(view.holders).toEqual([
      {
        connectionId: 'gone',
        name: 'Removed connection',
        provider: '—',
        status: null,
        watermark: NOT_REPORTED,
      },
    ]);
  });
});
