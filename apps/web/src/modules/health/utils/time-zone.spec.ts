import { describe, expect, it } from 'vitest';
import { isNewZone, supportedTimeZones, timeZoneOptions, timeZoneStatus } from './time-zone';

describe('timeZoneOptions', () => {
  it('offers UTC first, then every zone once, in alphabetical order', () => {
    expect(
      timeZoneOptions(['Europe/Paris', 'America/New_York', 'UTC', 'Asia/Tokyo', 'Europe/Paris']),
    ).toEqual(['UTC', 'America/New_York', 'Asia/Tokyo', 'Europe/Paris']);
  });

  it('keeps a saved zone the browser does not list, and offers UTC when it lists none', () => {
    expect(timeZoneOptions(['Europe/Paris'], ['Asia/Calcutta', 'Europe/Paris'])).toEqual([
      'UTC',
      'Asia/Calcutta',
      'Europe/Paris',
    ]);
    expect(timeZoneOptions([])).toEqual(['UTC']);
    expect(timeZoneOptions([], ['UTC', ''])).toEqual(['UTC']);
  });
});

describe('supportedTimeZones', () => {
  it("lists the runtime's IANA zones", () => {
    const zones = supportedTimeZones();
    expect(zones).toContain('Europe/Paris');
    expect(zones).toContain('America/New_York');
  });
});

describe('timeZoneStatus', () => {
  it('names the zone in force, and no recomputation once the saved zone is in force', () => {
    expect(timeZoneStatus({ timeZone: 'Europe/Paris', inForce: 'Europe/Paris' })).toEqual({
      headline: 'Days are cut in Europe/Paris',
      pending: null,
    });
  });

  it('says the figures are being recomputed in the saved zone until it is in force', () => {
    expect(timeZoneStatus({ timeZone: 'Asia/Tokyo', inForce: 'UTC' })).toEqual({
      headline: 'Days are cut in UTC',
      pending: 'Recomputing in Asia/Tokyo…',
    });
  });
});

describe('isNewZone', () => {
  it('is true only for a picked zone other than the saved one', () => {
    expect(isNewZone('Asia/Tokyo', 'UTC')).toBe(true);
    expect(isNewZone('UTC', 'UTC')).toBe(false);
    expect(isNewZone(null, 'UTC')).toBe(false);
  });
});
