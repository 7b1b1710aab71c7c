import { describe, expect, it } from 'vitest';
import { splitEcho } from './echo';

// Our write of a job title and a phone: started at 10:00:00.000, stored at 10:00:00.200.
const written = {
  fields: { jobTitle: 'v743', phone: '+1 415 555 0100' },
  // The target held title v700 and no phone before the write.
  prior: { jobTitle: 'v700' },
  sentAt: new Date('2026-11-30T10:00:00.000Z'),
  createdAt: new Date('2026-11-30T10:00:00.200Z'),
};
const report = (fields: Record<string, unknown>, at: string, fieldTimes: Record<string, string> = {}) => ({
  fields,
  fieldTimes,
  eventTime: new Date(at),
});

describe('splitEcho', () => {
  it('without writes, everything is an edit', () => {
    expect(splitEcho(report({ jobTitle: 'v792' }, '2026-11-30T09:59:00Z'), [])).toEqual({
      fields: { jobTitle: 'v792' },
    });
  });

  it('splits off fields reported back exactly as written, after the write started', () => {
    const event = report({ jobTitle: 'v743', firstName: 'Ada' }, '2026-11-30T10:00:00.100Z');
    expect(splitEcho(event, [written])).toEqual({ fields: { firstName: 'Ada' }, echo: { jobTitle: 'v743' } });
  });

  it('keeps a different value after the write, and the same value set again long after it', () => {
    expect(splitEcho(report({ jobTitle: 'v792' }, '2026-11-30T10:00:01Z'), [written])).toEqual({
      fields: { jobTitle: 'v792' },
    });
    expect(splitEcho(report({ jobTitle: 'v743' }, '2026-11-30T10:05:00Z'), [written])).toEqual({
      fields: { jobTitle: 'v743' },
    });
  });

  it('a snapshot from before the write: the source holds what we wrote; what it held before is no edit', () => {
    const event = report({ jobTitle: 'v700', phone: null, firstName: 'Ada' }, '2026-11-30T09:59:59Z');
    expect(splitEcho(event, [written])).toEqual({
      fields: { firstName: 'Ada' },
      held: { jobTitle: 'v743', phone: '+1 415 555 0100' },
    });
  });

  it('a snapshot from before the write with a value the source did not hold: an edit our write overwrote', () => {
    const event = report({ jobTitle: 'v799', phone: '+1 212 555 0199' }, '2026-11-30T09:59:59Z');
    expect(splitEcho(event, [written])).toEqual({
      fields: { jobTitle: 'v799', phone: '+1 212 555 0199' },
      held: { jobTitle: 'v743', phone: '+1 415 555 0100' },
    });
  });

  it('a field the provider dated before our write is an edit our write overwrote: merged, and held', () => {
    const event = report({ jobTitle: 'v792' }, '2026-11-30T09:59:59.900Z', {
      jobTitle: '2026-11-30T09:59:59.900Z',
    });
    expect(splitEcho(event, [written])).toEqual({ fields: { jobTitle: 'v792' }, held: { jobTitle: 'v743' } });
  });

  it('an echo of an earlier write of ours, reported after a later one started, only says what is held', () => {
    const earlier = {
      fields: { jobTitle: 'r2' },
      prior: { jobTitle: 'r1' },
      sentAt: new Date('2026-11-30T09:59:00Z'),
      createdAt: new Date('2026-11-30T09:59:00.100Z'),
    };
    const event = report({ jobTitle: 'r2' }, '2026-11-30T09:59:00.050Z');
    expect(splitEcho(event, [earlier, written])).toEqual({ fields: {}, held: { jobTitle: 'v743' } });
    // Reported after the later write, the same value is an edit back to it.
    expect(splitEcho(report({ jobTitle: 'r2' }, '2026-11-30T10:00:01Z'), [earlier, written])).toEqual({
      fields: { jobTitle: 'r2' },
    });
  });

  it('an edit made while our write was on its way is merged, and the source marked as holding our value', () => {
    const racing = report({ jobTitle: 'v800' }, '2026-11-30T10:00:00.100Z');
    expect(splitEcho(racing, [written])).toEqual({
      fields: { jobTitle: 'v800' },
      held: { jobTitle: 'v743' },
    });
  });

  it('judges each field by its own time where the provider gives one', () => {
    const event = report({ jobTitle: 'v743', phone: '+1 415 555 0100' }, '2026-11-30T10:00:00.100Z', {
      phone: '2026-11-30T11:00:00.000Z',
    });
    expect(splitEcho(event, [written])).toEqual({
      fields: { phone: '+1 415 555 0100' },
      echo: { jobTitle: 'v743' },
    });
  });
});
