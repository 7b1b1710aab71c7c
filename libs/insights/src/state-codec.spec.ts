import { describe, expect, it } from 'vitest';
import { InsightsEngine } from './insights-engine';
import { DAY, diff, HOUR, params } from './testing/insights-fixtures';
import { personId } from './types';

const B = Date.parse('2026-03-02T00:00:00Z');
const UUIDS = ['0b9e8f4c-1d2a-4c3b-9e8f-0a1b2c3d4e5f', 'f0e1d2c3-b4a5-4968-8776-655443322110'];

function busyEngine(): InsightsEngine {
  const made = InsightsEngine.create(params({ timeZone: 'Europe/Berlin' }));
  if (!made.ok) throw new Error(made.error.message);
  const e = made.value;
  const inputs: unknown[] = [
    { type: 'connect', connectionId: 'gmail', eventTime: B },
    { type: 'connect', connectionId: 'calendar', eventTime: B },
    { type: 'status', connectionId: 'calendar', status: 'failing' },
  ];
  for (let i = 0; i < 10; i++) {
    const people = [UUIDS[i % 2]!, ...(i % 3 === 0 ? ['crm:person/42'] : [])];
    const kind = (['mail_in', 'mail_out', 'meeting'] as const)[i % 3]!;
    inputs.push({ type: 'diff', diff: diff(kind, B + i * 7 * HOUR, { people, thread: `thread-${i % 2}` }) });
  }
  inputs.push({ type: 'diff', diff: diff('mail_in', B + 5 * DAY, { sign: -1 }) }); // an unsettled retraction
  inputs.push({ type: 'watermark', connectionId: 'gmail', eventTime: B + 3 * DAY });
  inputs.push({ type: 'watermark', connectionId: 'calendar', eventTime: B + DAY });
  inputs.push({ type: 'diff', diff: diff('mail_out', B + DAY + HOUR, { people: [UUIDS[0]!] }) });
  inputs.push({ type: 'tick', now: 5_000 });
  inputs.push({ type: 'diff', diff: diff('mail_out', B + 2 * HOUR, { people: [UUIDS[1]!] }) }); // touched, no tick yet
  for (const input of inputs) {
    const out = e.step(input);
    if (!out.ok) throw new Error(out.error.message);
  }
  return e;
}

describe('state encoding', () => {
  it('round-trips to the same bytes and the same answers', () => {
    const e = busyEngine();
    const bytes = e.encode();
    const back = InsightsEngine.decode(bytes, e.params);
    if (!back.ok) throw new Error(back.error.message);
    expect(back.value.encode()).toEqual(bytes);
    expect(back.value.stats()).toEqual(e.stats());
    for (const id of [...UUIDS, 'crm:person/42', 'p1']) {
      expect(back.value.snapshot(personId(id), B + 2 * DAY)).toEqual(e.snapshot(personId(id), B + 2 * DAY));
    }
    expect(e.stats()).toMatchObject({ persons: 4, lastFiredDay: '2026-03-02' });
  });

  it('refuses state folded with other params, and bytes that are not a state', () => {
    const bytes = busyEngine().encode();
    const other = InsightsEngine.decode(bytes, params({ timeZone: 'UTC' }));
    expect(other.ok ? null : other.error.code).toBe('StateMismatch');
    const p = params({ timeZone: 'Europe/Berlin' });
    for (const bad of [bytes.slice(0, bytes.length - 3), new Uint8Array([9]), Uint8Array.of(...bytes, 0)]) {
      const decoded = InsightsEngine.decode(bad, p);
      expect(decoded.ok ? null : decoded.error.code).toBe('CorruptState');
    }
  });

  it('keeps a person with ten activities in about a hundred bytes', () => {
    const made = InsightsEngine.create(params());
    if (!made.ok) throw new Error(made.error.message);
    const empty = made.value.encode().length;
    for (let i = 0; i < 10; i++) {
      const kind = (['mail_in', 'mail_out', 'meeting'] as const)[i % 3]!;
      const thread = kind === 'meeting' ? {} : { thread: `18c2f${i % 3}a9b7e` };
      made.value.step({
        type: 'diff',
        diff: diff(kind, B + i * 9 * DAY + i * 3_217_000, { people: [UUIDS[0]!], ...thread }),
      });
    }
    const perPerson = made.value.encode().length - empty;
    expect(perPerson).toBeLessThan(120);
  });
});
