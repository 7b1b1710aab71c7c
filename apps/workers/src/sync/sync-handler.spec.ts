import { describe, expect, it } from 'vitest';
import { splitEcho } from './sync-handler';

const written = {
  fields: { jobTitle: 'v743', phone: '+1 415 555 0100' },
  createdAt: new Date('2026-11-30T10:00:00Z'),
};

describe('splitEcho', () => {
  it('splits off fields reported back exactly as written, at or before the write', () => {
    const event = {
      fields: { jobTitle: 'v743', firstName: 'Ada' },
      fieldTimes: {},
      eventTime: new Date('2026-11-30T09:59:59.990Z'),
    };
    expect(splitEcho(event, [written])).toEqual({ fields: { firstName: 'Ada' }, echo: { jobTitle: 'v743' } });
  });

  it('keeps a different value, a field we did not write, and a value set again long after the write', () => {
    const later = {
      fields: { jobTitle: 'v743' },
      fieldTimes: {},
      eventTime: new Date('2026-11-30T10:05:00Z'),
    };
    expect(splitEcho(later, [written])).toEqual({ fields: { jobTitle: 'v743' } });
    const other = {
      fields: { jobTitle: 'v792' },
      fieldTimes: {},
      eventTime: new Date('2026-11-30T09:59:00Z'),
    };
    expect(splitEcho({ ...other, eventTime: new Date('2026-11-30T10:00:01Z') }, [written])).toEqual({
      fields: { jobTitle: 'v792' },
    });
    expect(splitEcho(other, [])).toEqual({ fields: { jobTitle: 'v792' } });
  });

  it('an edit to another value made before our write is merged, and the source marked as holding our value', () => {
    const overwritten = {
      fields: { jobTitle: 'v792', firstName: 'Ada' },
      fieldTimes: {},
      eventTime: new Date('2026-11-30T09:59:00Z'),
    };
    expect(splitEcho(overwritten, [written])).toEqual({
      fields: { jobTitle: 'v792', firstName: 'Ada' },
      held: { jobTitle: 'v743' },
    });
  });

  it('an echo of an earlier write of ours, reported after a later one, is an echo still', () => {
    const earlier = { fields: { jobTitle: 'r2' }, createdAt: new Date('2026-11-30T09:59:00Z') };
    const event = {
      fields: { jobTitle: 'r2' },
      fieldTimes: {},
      eventTime: new Date('2026-11-30T09:59:00.500Z'),
    };
    expect(splitEcho(event, [earlier, written])).toEqual({
      fields: {},
      echo: { jobTitle: 'r2' },
      held: { jobTitle: 'v743' },
    });
  });

  it('judges each field by its own time where the provider gives one', () => {
    const event = {
      fields: { jobTitle: 'v743', phone: '+1 415 555 0100' },
      fieldTimes: { phone: '2026-11-30T11:00:00.000Z' },
      eventTime: new Date('2026-11-30T09:59:59Z'),
    };
    expect(splitEcho(event, [written])).toEqual({
      fields: { phone: '+1 415 555 0100' },
      echo: { jobTitle: 'v743' },
    });
  });
});
