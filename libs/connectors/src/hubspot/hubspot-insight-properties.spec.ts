import { describe, expect, it } from 'vitest';
import type { InsightValues } from '../contract/connector';
import { toHubspotValue } from './hubspot.mapper';
import {
  INSIGHT_PROPERTIES,
  INSIGHT_PROPERTY_GROUP,
  insightValuesProblem,
  toHubspotInsightProperties,
} from './hubspot-insight-properties';

const values: InsightValues = {
  lastContactedAt: '2026-11-28T09:30:00+01:00',
  lastContactedVia: 'mail_in',
  nextMeetingAt: null,
  mailsIn30: 4,
  mailsOut30: 0,
  meetings30: 2,
  engagement7: 1,
  engagement90: 11,
  trend: 'cooling',
};

describe('HubSpot insight properties', () => {
  it('declares nine syncline_ properties in the syncline group, labelled and described as Syncline’s', () => {
    expect(INSIGHT_PROPERTY_GROUP.name).toBe('syncline');
    expect(INSIGHT_PROPERTIES.map((p) => [p.name, p.type])).toEqual([
      ['syncline_last_contacted', 'datetime'],
      ['syncline_last_contacted_via', 'enumeration'],
      ['syncline_next_meeting', 'datetime'],
      ['syncline_mails_in_30d', 'number'],
      ['syncline_mails_out_30d', 'number'],
      ['syncline_meetings_30d', 'number'],
      ['syncline_engagement_7d', 'number'],
      ['syncline_engagement_90d', 'number'],
      ['syncline_engagement_trend', 'enumeration'],
    ]);
    for (const p of INSIGHT_PROPERTIES) {
      expect(p.label).toContain('(Syncline)');
      expect(p.description).toContain('Computed by Syncline from mail and calendar activity');
      expect(p.description).toContain('overwritten');
    }
    const options = (name: string) => INSIGHT_PROPERTIES.find((p) => p.name === name)?.options;
    expect(options('syncline_last_contacted_via')).toEqual([
      { value: 'mail_in', label: 'Mail from them' },
      { value: 'mail_out', label: 'Mail to them' },
      { value: 'meeting', label: 'Meeting' },
    ]);
    expect(options('syncline_engagement_trend')?.map((o) => o.value)).toEqual([
      'warming',
      'steady',
      'cooling',
      'cold',
    ]);
  });

  it('maps values to HubSpot strings: datetimes as the mapper writes them, null clearing', () => {
    expect(toHubspotInsightProperties(values)).toEqual({
      syncline_last_contacted: '2026-11-28T08:30:00.000Z',
      syncline_last_contacted_via: 'mail_in',
      syncline_next_meeting: '',
      syncline_mails_in_30d: '4',
      syncline_mails_out_30d: '0',
      syncline_meetings_30d: '2',
      syncline_engagement_7d: '1',
      syncline_engagement_90d: '11',
      syncline_engagement_trend: 'cooling',
    });
    expect(toHubspotInsightProperties(values).syncline_last_contacted).toBe(
      toHubspotValue(values.lastContactedAt, 'datetime'),
    );
    expect(
      toHubspotInsightProperties({ ...values, lastContactedAt: null, lastContactedVia: null }),
    ).toMatchObject({ syncline_last_contacted: '', syncline_last_contacted_via: '' });
  });

  it('finds values HubSpot would refuse', () => {
    expect(insightValuesProblem(values)).toBeUndefined();
    expect(insightValuesProblem({ ...values, mailsIn30: -1 })).toContain('mailsIn30');
    expect(insightValuesProblem({ ...values, meetings30: 1.5 })).toContain('meetings30');
    expect(insightValuesProblem({ ...values, nextMeetingAt: 'soon' })).toContain('nextMeetingAt');
    expect(insightValuesProblem({ ...values, trend: 'hot' as InsightValues['trend'] })).toContain('trend');
    expect(
      insightValuesProblem({ ...values, lastContactedVia: 'call' as InsightValues['lastContactedVia'] }),
    ).toContain('lastContactedVia');
  });
});
