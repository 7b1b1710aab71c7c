import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
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

describe("activities written to a CRM are associated with their people's contacts there", () => {
  interface Row {
    op: string;
    entity_id: string;
    fields: Record<string, unknown>;
    status: string;
  }
  const outboxOf = async (connectionId: string): Promise<Row[]> =>
    (
      await pool.query<Row>(
        'SELECT op, entity_id, fields, status FROM outbox WHERE connection_id = $1 ORDER BY id',
        [connectionId],
      )
    ).rows;
  /** The push stage, played: every pending row sent, a created record linked under a made-up id. */
  const send = async (workspaceId: string, connectionId: string) => {
    const { rows } = await pool.query<{ entity_id: string; entity_type: string; op: string }>(
      `UPDATE outbox SET status = 'sent' WHERE connection_id = $1 AND status = 'pending'
       RETURNING entity_id, entity_type, op`,
      [connectionId],
    );
    for (const row of rows.filter((r) => r.op === 'create'))
      await pool.query(
        `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [workspaceId, connectionId, row.entity_type, `made-${row.entity_id}`, row.entity_id],
      );
  };

  it('a mail from a known person: one email engagement, associated with that contact once; a meeting follows its attendees', async () => {
    const { workspaceId, crm, gmail, calendar } = await seedConnections(
      pool,
      { crm: 'hubspot', gmail: 'gmail', calendar: 'google-calendar' },
      { reconciled: true },
    );
    const stage = syncStage(pool);
    await stage.handle(
      contactEvent(workspaceId, crm, 'c-ada', at(0), { email: 'ada@analytical.example', firstName: 'Ada' }),
      contactEvent(workspaceId, crm, 'c-bob', at(0), { email: 'bob@analytical.example', firstName: 'Bob' }),
    );
    const ada = await entityOf(crm, 'c-ada');
    const bob = await entityOf(crm, 'c-bob');
    await send(workspaceId, crm);

    const mail = mailEvent(workspaceId, gmail, 'm-1', at(1), {
      messageId: '<m-1@analytical.example>',
      subject: 'Numbers',
      from: 'ada@analytical.example',
      to: ['me@syncline.example'],
      sentAt: '2026-11-21T08:00:00.000Z',
    });
    await stage.handle(mail);
    const mailId = await entityOf(gmail, 'm-1');
    // The engagement is created, and associated with Ada's contact once it exists (the push
    // resolves the association after the create has landed); the stranger gets nothing.
    expect(
      (await outboxOf(crm))
        .filter((r) => r.status === 'pending')
        .map((r) => [r.op, r.entity_id, r.fields.toId]),
    ).toEqual([
      ['create', mailId, undefined],
      ['associate', mailId, ada],
    ]);
    await send(workspaceId, crm);
    // HubSpot reports the engagement back (our create's echo), and the mail comes again: nothing more.
    await stage.handle(
      {
        ...mailEvent(workspaceId, crm, `made-${mailId}`, at(2), {
          subject: 'Numbers',
          sentAt: '2026-11-21T08:00:00.000Z',
        }),
        origin: { synclineId: mailId },
      },
      mail,
    );
    // Ada's contact changes: her mail's association, reached from her side, stands.
    await stage.handle(
      contactEvent(workspaceId, crm, 'c-ada', at(2), {
        email: 'ada@analytical.example',
        firstName: 'Ada',
        jobTitle: 'Analyst',
      }),
    );
    // (Field updates are not this spec's: the played push above leaves no receipts.)
    expect(
      (await outboxOf(crm)).filter((r) => r.status === 'pending' && r.op !== 'update' && r.op !== 'create'),
    ).toEqual([]);

    // A meeting with both: associated with both; Bob is uninvited before the push ran: his
    // association is never sent. Then Ada is uninvited after it was: ours, so it is removed.
    const meeting = (time: Date, attendees: string[]) =>
      meetingEvent(workspaceId, calendar, time, {
        iCalUID: 'uid-9@google.com',
        title: 'Review',
        startAt: '2026-11-25T14:00:00.000Z',
        organizer: 'me@syncline.example',
        attendees: attendees.map((email) => ({ email, responseStatus: 'accepted' })),
      });
    await stage.handle(meeting(at(3), ['ada@analytical.example', 'bob@analytical.example']));
    const meetingId = await entityOf(calendar, 'evt-1');
    const owed = (await outboxOf(crm)).filter((r) => r.entity_id === meetingId);
    expect(owed.map((r) => [r.op, r.fields.toId]).sort()).toEqual(
      [
        ['associate', ada],
        ['associate', bob],
        ['create', undefined],
      ].sort(),
    );
    await stage.handle(meeting(at(4), ['ada@analytical.example']));
    expect(
      (await outboxOf(crm))
        .filter((r) => r.entity_id === meetingId && r.op === 'associate')
        .map((r) => [r.fields.toId, r.status])
        .sort(),
    ).toEqual(
      [
        [ada, 'pending'],
        [bob, 'superseded'],
      ].sort(),
    );
    await send(workspaceId, crm);
    await stage.handle(meeting(at(5), []));
    expect(
      (await outboxOf(crm))
        .filter((r) => r.entity_id === meetingId && r.status === 'pending')
        .map((r) => [r.op, r.fields.toId]),
    ).toEqual([['dissociate', ada]]);
  });
});
