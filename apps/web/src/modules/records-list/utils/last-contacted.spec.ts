import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../ui/utils/time';
import { lastContactedCell, TREND_OPTIONS } from './last-contacted';

const NOW = Date.parse('2026-12-12T12:00:00.000Z');

describe('lastContactedCell', () => {
  it('says "never" with a cold badge when there is no contact, or no insights at all', () => {
    const never = { text: 'never', detail: null, trend: { label: 'Cold', tone: 'info' } };
    expect(lastContactedCell(null, NOW)).toEqual(never);
    expect(
      lastContactedCell(
        { lastContactedAt: null, lastContactedVia: null, nextMeetingAt: null, trend: 'cold' },
        NOW,
      ),
    ).toEqual(never);
  });

  it('shows the contact relative to now, the exact time and how in the detail, and the trend', () => {
    const at = '2026-12-09T12:00:00.000Z';
    expect(
      lastContactedCell(
        { lastContactedAt: at, lastContactedVia: 'mail_out', nextMeetingAt: null, trend: 'warming' },
        NOW,
      ),
    ).toEqual({
      text: '3 d ago',
      detail: `${formatDateTime(at)} · your mail`,
      trend: { label: 'Warming', tone: 'success' },
    });
    expect(
      lastContactedCell(
        {
          lastContactedAt: '2026-12-12T10:00:00.000Z',
          lastContactedVia: null,
          nextMeetingAt: null,
          trend: 'cooling',
        },
        NOW,
      ),
    ).toMatchObject({
      text: '2 h ago',
      detail: formatDateTime('2026-12-12T10:00:00.000Z'),
      trend: { tone: 'warning' },
    });
  });
});

describe('TREND_OPTIONS', () => {
  it('offers every trend once, cold saying it includes the never contacted', () => {
    expect(TREND_OPTIONS.map((o) => o.value)).toEqual(['warming', 'steady', 'cooling', 'cold']);
    expect(TREND_OPTIONS.at(-1)?.label).toMatch(/never contacted/);
  });
});
