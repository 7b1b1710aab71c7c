import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { contactEvent, type StageEvent, seedConnections, syncStage } from './testing/sync-stage';

/**
 * Activity associations as the real sync stage writes them, against real Postgres: who took
 * part in a meeting or a mail, resolved to people, replaced when the attendee list changes,
 * and the same after a replay of the same events (or a rebuild from nothing).
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('sync_associations');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const T0 = new Date('2026-11-20T09:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

const meetingEvent = (
  workspaceId: string,
  connectionId: string,
  time: Date,
  fields: Record<string, unknown>,
): StageEvent => ({
  workspaceId,
  connectionId,
  entityType: 'meeting',
  externalId: 'evt-1',
  op: 'upsert',
  eventKey: `events:evt-1:${time.getTime()}`,
  fields,
  fieldTimes: {},
  eventTime: time,
  origin: null,
});

const mailEvent = (
  workspaceId: string,
  connectionId: string,
  externalId: string,
  time: Date,
  fields: Record<string, unknown>,
): StageEvent => ({
  workspaceId,
  connectionId,
  entityType: 'email_activity',
  externalId,
  op: 'upsert',
  eventKey: `messages:${externalId}:${time.getTime()}`,
  fields,
  fieldTimes: {},
  eventTime: time,
  origin: null,
});

const entityOf = async (connectionId: string, externalId: string): Promise<string> => {
  const { rows } = await pool.query<{ entity_id: string }>(
    'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
    [connectionId, externalId],
  );
  const id = rows[0]?.entity_id;
  if (id === undefined) throw new Error(`${externalId} is not linked`);
  return id;
};

interface Row {
  activity_id: string;
  activity_type: string;
  role: string;
  email: string;
  party_id: string | null;
  occurred_at: Date;
}

const rowsOf = async (workspaceId: string): Promise<Row[]> =>
  (
    await pool.query<Row>(
      `SELECT activity_id, activity_type, role, email, party_id, occurred_at FROM entity_association
        WHERE workspace_id = $1 ORDER BY activity_id, role, email`,
      [workspaceId],
    )
  ).rows;

/** Every column, created_at included: a replay must not even touch a row. */
const rawRows = async (workspaceId: string): Promise<string[]> =>
  (
    await pool.query<{ row: string }>(
      'SELECT to_jsonb(a)::text AS row FROM entity_association a WHERE workspace_id = $1 ORDER BY 1',
      [workspaceId],
    )
  ).rows.map((r) => r.row);

describe('activity associations in the sync stage', () => {
  it('are written from the merged view, replaced with the attendee list, and unchanged by a replay', async () => {
    const { workspaceId, crm, calendar, gmail } = await seedConnections(pool, {
      crm: 'hubspot',
      calendar: 'google-calendar',
      gmail: 'gmail',
    });
    const stage = syncStage(pool);
    const ada = contactEvent(workspaceId, crm, 'c-ada', at(0), {
      email: 'Ada@Analytical.example',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    const cy = contactEvent(workspaceId, crm, 'c-cy', at(0), { email: 'cy@other.example', firstName: 'Cy' });
    const meeting = meetingEvent(workspaceId, calendar, at(1), {
      iCalUID: 'uid-1@google.com',
      title: 'Roadmap review',
      startAt: '2026-11-25T14:00:00.000Z',
      organizer: 'me@syncline.example',
      attendees: [
        { email: 'me@syncline.example', responseStatus: 'accepted', organizer: true },
        { email: 'ada@analytical.example', responseStatus: 'accepted' },
        { email: 'bob@guest.example', responseStatus: 'needsAction' },
      ],
    });
    const adaMail = mailEvent(workspaceId, gmail, 'm-1', at(2), {
      messageId: '<m-1@analytical.example>',
      subject: 'Numbers',
      from: 'ada@analytical.example',
      to: ['me@syncline.example'],
      cc: [],
      sentAt: '2026-11-21T08:00:00.000Z',
    });
    const cyMail = mailEvent(workspaceId, gmail, 'm-2', at(3), {
      messageId: '<m-2@other.example>',
      subject: 'Hello',
      from: 'cy@other.example',
      to: ['me@syncline.example'],
      occurredAt: '2026-11-22T08:00:00.000Z',
    });
    const first = [ada, cy, meeting, adaMail, cyMail];
    await stage.handle(...first);

    const adaId = await entityOf(crm, 'c-ada');
    const cyId = await entityOf(crm, 'c-cy');
    const meetingId = await entityOf(calendar, 'evt-1');
    const adaMailId = await entityOf(gmail, 'm-1');
    const cyMailId = await entityOf(gmail, 'm-2');
    const rows = await rowsOf(workspaceId);
    const byParty = (id: string) =>
      rows
        .filter((r) => r.party_id === id)
        .map((r) => [r.activity_id, r.activity_type, r.role, r.occurred_at.toISOString()]);
    expect(byParty(adaId).sort()).toEqual(
      [
        [meetingId, 'meeting', 'attendee', '2026-11-25T14:00:00.000Z'],
        [adaMailId, 'email_activity', 'from', '2026-11-21T08:00:00.000Z'],
      ].sort(),
    );
    // occurredAt stands in for a missing sentAt; another person's mail is not Ada's.
    expect(byParty(cyId)).toEqual([[cyMailId, 'email_activity', 'from', '2026-11-22T08:00:00.000Z']]);
    // The organizer listed among the attendees is the organizer, not also an attendee.
    expect(
      rows.filter((r) => r.activity_id === meetingId).map((r) => [r.role, r.email, r.party_id !== null]),
    ).toEqual([
      ['attendee', 'ada@analytical.example', true],
      ['attendee', 'bob@guest.example', true],
      ['organizer', 'me@syncline.example', true],
    ]);

    // The attendee list changes: Ada is no longer invited, Dee is; the meeting moves.
    const moved = meetingEvent(workspaceId, calendar, at(10), {
      iCalUID: 'uid-1@google.com',
      title: 'Roadmap review',
      startAt: '2026-11-26T14:00:00.000Z',
      organizer: 'me@syncline.example',
      attendees: [
        { email: 'me@syncline.example', responseStatus: 'accepted', organizer: true },
        { email: 'bob@guest.example', responseStatus: 'accepted' },
        { email: 'dee@guest.example', responseStatus: 'needsAction' },
      ],
    });
    await stage.handle(moved);
    const after = await rowsOf(workspaceId);
    expect(
      after
        .filter((r) => r.activity_id === meetingId)
        .map((r) => [r.role, r.email, r.occurred_at.toISOString()]),
    ).toEqual([
      ['attendee', 'bob@guest.example', '2026-11-26T14:00:00.000Z'],
      ['attendee', 'dee@guest.example', '2026-11-26T14:00:00.000Z'],
      ['organizer', 'me@syncline.example', '2026-11-26T14:00:00.000Z'],
    ]);
    expect(after.filter((r) => r.party_id === adaId).map((r) => r.activity_id)).toEqual([adaMailId]);

    // A replay of every event, in a new process (nothing cached), leaves every row untouched.
    const settled = await rawRows(workspaceId);
    await syncStage(pool).handle(...first, moved);
    expect(await rawRows(workspaceId)).toEqual(settled);

    // A rebuild from nothing (replay from offset 0 after the table was emptied) gives the same rows.
    await pool.query('DELETE FROM entity_association WHERE workspace_id = $1', [workspaceId]);
    await syncStage(pool).handle(...first, moved);
    const strip = (list: Row[]) => list.map((r) => ({ ...r, occurred_at: r.occurred_at.toISOString() }));
    expect(strip(await rowsOf(workspaceId))).toEqual(strip(after));
  });

  it('drops the rows of an activity no source holds any more', async () => {
    const { workspaceId, calendar } = await seedConnections(pool, { calendar: 'google-calendar' });
    const stage = syncStage(pool);
    const fields = {
      iCalUID: 'uid-2@google.com',
      title: 'Intro',
      startAt: '2026-11-27T10:00:00.000Z',
      attendees: [{ email: 'eve@guest.example', responseStatus: 'accepted' }],
    };
    await stage.handle(meetingEvent(workspaceId, calendar, at(0), fields));
    expect((await rowsOf(workspaceId)).map((r) => r.email)).toEqual(['eve@guest.example']);
    await stage.handle({ ...meetingEvent(workspaceId, calendar, at(5), {}), op: 'delete' });
    expect(await rowsOf(workspaceId)).toEqual([]);
  });
});
