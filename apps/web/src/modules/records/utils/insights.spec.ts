import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../ui/utils/time';
import type { InsightHolder } from '../api';
import {
  completeness,
  durationWords,
  isHolding,
  lastContactedWords,
  provenanceWords,
  replyWords,
  viaWords,
  whenWords,
  zoneWords,
} from './insights';

const NOW = Date.parse('2026-12-03T12:00:00Z');

const holder = (patch: Partial<InsightHolder>): InsightHolder => ({
  connectionId: '00000000-0000-4000-8000-000000000001',
  provider: 'gmail',
  displayName: null,
  status: 'live',
  watermark: '2026-12-03T10:00:00Z',
  ...patch,
});

describe('durationWords', () => {
  it.each([
    [0, '0 s'],
    [45, '45 s'],
    [60, '1 min'],
    [12 * 60 + 20, '12 min'],
    [2 * 3600, '2 h'],
    [2 * 3600 + 30 * 60, '2 h 30 min'],
    [3 * 86_400 + 4 * 3600 + 59, '3 d 4 h'],
    [86_400, '1 d'],
  ])('%s s is %s', (seconds, expected) => {
    expect(durationWords(seconds)).toBe(expected);
  });
});

describe('whenWords', () => {
  it('gives a past time relative, then absolute', () => {
    const iso = '2026-11-30T12:00:00Z';
    expect(whenWords(iso, NOW)).toBe(`3 d ago · ${formatDateTime(iso)}`);
  });

  it('gives a future time relative, then absolute', () => {
    expect(whenWords('2026-12-03T14:00:00Z', NOW)).toBe(`in 2 h · ${formatDateTime('2026-12-03T14:00:00Z')}`);
    expect(whenWords('2026-12-03T12:20:00Z', NOW)).toBe(
      `in 20 min · ${formatDateTime('2026-12-03T12:20:00Z')}`,
    );
    expect(whenWords('2026-12-08T12:00:00Z', NOW)).toBe(`in 5 d · ${formatDateTime('2026-12-08T12:00:00Z')}`);
  });

  it('gives only the absolute time past a month, either way', () => {
    expect(whenWords('2026-09-01T12:00:00Z', NOW)).toBe(formatDateTime('2026-09-01T12:00:00Z'));
    expect(whenWords('2027-02-01T12:00:00Z', NOW)).toBe(formatDateTime('2027-02-01T12:00:00Z'));
  });
});

describe('lastContactedWords', () => {
  it('says how, from the salesperson’s side', () => {
    expect(viaWords('mail_in')).toBe('their mail');
    expect(viaWords('mail_out')).toBe('your mail');
    expect(viaWords('meeting')).toBe('meeting');
    const at = '2026-12-03T09:00:00Z';
    expect(lastContactedWords({ lastContactedAt: at, lastContactedVia: 'meeting' }, NOW)).toBe(
      `3 h ago · ${formatDateTime(at)} · meeting`,
    );
    expect(lastContactedWords({ lastContactedAt: at, lastContactedVia: null }, NOW)).toBe(
      `3 h ago · ${formatDateTime(at)}`,
    );
  });

  it('says Never before any contact', () => {
    expect(lastContactedWords({ lastContactedAt: null, lastContactedVia: null }, NOW)).toBe('Never');
  });
});

describe('replyWords', () => {
  it('gives the median with the number of replies, or nothing without a median', () => {
    expect(replyWords({ replies90: 8, medianReplySeconds90: 9000 })).toBe('2 h 30 min (median of 8 replies)');
    expect(replyWords({ replies90: 1, medianReplySeconds90: 600 })).toBe('10 min (median of 1 reply)');
    expect(replyWords({ replies90: 0, medianReplySeconds90: null })).toBeNull();
  });
});

describe('provenanceWords', () => {
  it('counts each activity once and names each provider it came from, once', () => {
    expect(
      provenanceWords({
        // A meeting in both calendars is one activity of the eleven.
        activities: 11,
        sources: [
          { provider: 'gmail', activities: 9 },
          { provider: 'google-calendar', activities: 2 },
          { provider: 'microsoft-calendar', activities: 1 },
          { provider: 'hubspot', activities: 0 },
        ],
      }),
    ).toBe('Computed by Syncline from 11 activities in Gmail, Google Calendar, Outlook Calendar');
    expect(provenanceWords({ activities: 1, sources: [{ provider: 'gmail', activities: 1 }] })).toBe(
      'Computed by Syncline from 1 activity in Gmail',
    );
    expect(provenanceWords({ activities: 0, sources: [] })).toBe('Computed by Syncline from 0 activities');
  });
});

describe('completeness', () => {
  it('names only the connections that hold the watermark back', () => {
    expect(isHolding(holder({}))).toBe(false);
    expect(isHolding(holder({ status: 'paused' }))).toBe(true);
    expect(isHolding(holder({ watermark: null }))).toBe(true);
    const at = '2026-12-02T00:00:00Z';
    expect(
      completeness({
        completeUpTo: at,
        heldBy: [
          holder({ displayName: 'Calendar', provider: 'google-calendar' }),
          holder({ displayName: 'Gmail', status: 'paused' }),
          holder({ provider: 'hubspot', status: 'needs_reauth' }),
          holder({ provider: 'hubspot', displayName: 'CRM B', status: 'error' }),
          holder({ provider: null, status: null, watermark: null }),
        ],
      }),
    ).toEqual({
      headline: `Complete up to ${formatDateTime(at)}`,
      waiting: [
        'Waiting for Gmail (paused)',
        'Waiting for HubSpot (needs reconnecting)',
        'Waiting for CRM B (failing)',
        'Waiting for a removed connection (not caught up yet)',
      ],
    });
  });

  it('waits for every mailbox and calendar before the first watermark, naming the holders', () => {
    expect(
      completeness({
        completeUpTo: null,
        heldBy: [
          holder({ displayName: 'Gmail', status: 'backfilling', watermark: null }),
          holder({ provider: 'google-calendar', watermark: '2026-12-01T00:00:00Z' }),
        ],
      }),
    ).toEqual({
      headline: 'Waiting for every connected mailbox, calendar and CRM to catch up',
      waiting: [
        'Waiting for Gmail (on its first sync)',
        `Waiting for Google Calendar (complete up to ${formatDateTime('2026-12-01T00:00:00Z')})`,
      ],
    });
  });
});

describe('zoneWords', () => {
  it('names the zone the days are cut in', () => {
    expect(zoneWords('Europe/Paris')).toBe('days in Europe/Paris');
    expect(zoneWords('UTC')).toBe('days in UTC');
  });
});
