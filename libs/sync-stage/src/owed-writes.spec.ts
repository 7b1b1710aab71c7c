import type { MergeOutcome } from '@syncline/conflicts';
import { describe, expect, it } from 'vitest';
import type { TargetConnection } from './connections';
import { createKey, deleteKey, updateKey } from './idempotency-key';
import { type OwingEntity, owedWrites } from './owed-writes';

const HUBSPOT = 'c-hubspot';
const OTHER_HUBSPOT = 'c-hubspot-2';
const CALENDAR = 'c-calendar';

const target = (id: string, patch: Partial<TargetConnection> = {}): TargetConnection => ({
  id,
  provider: 'hubspot',
  status: 'live',
  deletePolicy: 'unlink',
  reconciled: true,
  accountAddress: null,
  ...patch,
});

const outcome = (patch: Partial<MergeOutcome> = {}): MergeOutcome => ({
  entityId: 'e1',
  status: 'applied',
  values: { email: 'ada@example.com', jobTitle: 'CTO', phone: null },
  provenance: {},
  conflicts: [],
  owed: new Map(),
  held: new Map(),
  heads: ['h2', 'h1'],
  ...patch,
});

const person = (patch: Partial<OwingEntity> = {}): OwingEntity => ({
  entityId: 'e1',
  workspaceId: 'w1',
  entityType: 'person',
  outcome: outcome(),
  deletedIn: [],
  linked: new Map([[HUBSPOT, 'contact-1']]),
  everDeletedIn: new Set(),
  recreateIn: new Set(),
  createAgain: new Map(),
  ...patch,
});

describe('owedWrites', () => {
  it('owes a linked target an update of the fields it is owed, at the heads, with what it holds', () => {
    const rows = owedWrites(
      person({
        outcome: outcome({
          owed: new Map([[HUBSPOT, ['jobTitle', 'phone']]]),
          held: new Map([[HUBSPOT, { jobTitle: 'CEO' }]]),
        }),
      }),
      [target(HUBSPOT)],
    );
    expect(rows).toEqual([
      {
        workspace_id: 'w1',
        entity_id: 'e1',
        entity_type: 'person',
        connection_id: HUBSPOT,
        op: 'update',
        external_id: 'contact-1',
        fields: { jobTitle: 'CTO', phone: null },
        prior: { jobTitle: 'CEO' },
        heads: ['h2', 'h1'],
        idempotency_key: updateKey('e1', HUBSPOT, ['h1', 'h2']),
      },
    ]);
  });

  it('owes a linked target nothing when it is owed no field', () => {
    expect(owedWrites(person(), [target(HUBSPOT)])).toEqual([]);
  });

  it('creates the record in a reconciled CRM that lacks it, with its non-null values, once another CRM has it', () => {
    const rows = owedWrites(person(), [target(HUBSPOT), target(OTHER_HUBSPOT)]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      connection_id: OTHER_HUBSPOT,
      op: 'create',
      external_id: null,
      fields: { email: 'ada@example.com', jobTitle: 'CTO' },
      idempotency_key: createKey('e1', OTHER_HUBSPOT),
    });
  });

  it('creates nothing where the target is not reconciled, not live, or deleted the record once', () => {
    const targets = [target(HUBSPOT), target(OTHER_HUBSPOT, { reconciled: false })];
    expect(owedWrites(person(), targets)).toEqual([]);
    expect(owedWrites(person(), [target(HUBSPOT), target(OTHER_HUBSPOT, { status: 'paused' })])).toEqual([]);
    expect(
      owedWrites(person({ everDeletedIn: new Set([OTHER_HUBSPOT]) }), [
        target(HUBSPOT),
        target(OTHER_HUBSPOT),
      ]),
    ).toEqual([]);
  });

  it('creates a person in a CRM only from another CRM, unless the provider merged its record away', () => {
    const fromCalendar = person({ linked: new Map([[CALENDAR, 'attendee-1']]) });
    const targets = [target(CALENDAR, { provider: 'google-calendar' }), target(HUBSPOT)];
    expect(owedWrites(fromCalendar, targets)).toEqual([]);
    const recreated = owedWrites({ ...fromCalendar, recreateIn: new Set([HUBSPOT]) }, targets);
    expect(recreated.map((r) => [r.connection_id, r.op])).toEqual([[HUBSPOT, 'create']]);
  });

  describe("a person's own calendar or task list", () => {
    const DANA = 'c-dana-google';
    const MARCO = 'c-marco-outlook';
    const calendars = [
      target(HUBSPOT),
      target(DANA, { provider: 'google-calendar', accountAddress: 'dana@brightwave.io' }),
      target(MARCO, { provider: 'microsoft-calendar', accountAddress: 'marco@brightwave.io' }),
    ];
    const meeting = (values: Record<string, unknown>) =>
      person({
        entityType: 'meeting',
        outcome: outcome({ values: { title: 'Pipeline review', ...values } }),
        linked: new Map([[HUBSPOT, 'meeting-1']]),
      });
    const createdIn = (rows: ReturnType<typeof owedWrites>) =>
      rows.filter((r) => r.op === 'create').map((r) => r.connection_id);

    it("goes to the calendars of its organizer and attendees only, whatever the address's case", () => {
      const invited = meeting({
        organizer: 'Dana@Brightwave.io',
        attendees: [{ email: 'bea@acme.example', responseStatus: 'accepted' }],
      });
      expect(createdIn(owedWrites(invited, calendars))).toEqual([DANA]);
      const both = meeting({ attendees: [{ email: 'MARCO@brightwave.io' }, 'dana@brightwave.io'] });
      expect(createdIn(owedWrites(both, calendars)).sort()).toEqual([DANA, MARCO].sort());
      expect(
        createdIn(owedWrites(meeting({ attendees: [{ email: 'bea@acme.example' }] }), calendars)),
      ).toEqual([]);
    });

    it('goes to the one calendar of a one-salesperson workspace, invited or not', () => {
      const alone = calendars.slice(0, 2);
      expect(createdIn(owedWrites(meeting({}), alone))).toEqual([DANA]);
      // A disconnected colleague's calendar does not make it two.
      const gone = [...alone, target(MARCO, { provider: 'microsoft-calendar', status: 'disconnected' })];
      expect(createdIn(owedWrites(meeting({}), gone))).toEqual([DANA]);
    });

    it("makes a task in the workspace's one task list, and in none of several", () => {
      const task = person({
        entityType: 'task',
        outcome: outcome({ values: { title: 'Send the SOW', status: 'open' } }),
        linked: new Map([[HUBSPOT, 'task-1']]),
      });
      const one = [
        target(HUBSPOT),
        target('c-tasks', { provider: 'google-tasks', accountAddress: 'dana@brightwave.io' }),
      ];
      expect(createdIn(owedWrites(task, one))).toEqual(['c-tasks']);
      const two = [
        ...one,
        target('c-todo', { provider: 'microsoft-todo', accountAddress: 'marco@brightwave.io' }),
      ];
      expect(createdIn(owedWrites(task, two))).toEqual([]);
    });

    it('never writes an invitation: a meeting another person organizes is theirs to change', () => {
      const invitation = {
        ...meeting({ organizer: 'dana@brightwave.io' }),
        linked: new Map([
          [HUBSPOT, 'meeting-1'],
          [DANA, 'event-dana'],
          [MARCO, 'event-marco'],
        ]),
        outcome: outcome({
          values: { title: 'Moved', organizer: 'dana@brightwave.io' },
          owed: new Map([
            [DANA, ['title']],
            [MARCO, ['title']],
          ]),
        }),
      };
      expect(owedWrites(invitation, calendars).map((r) => [r.connection_id, r.op])).toEqual([
        [DANA, 'update'],
      ]);
    });

    it('owes a calendar none of the fields it only reports (organizer, iCalendar UID)', () => {
      const linked = {
        ...meeting({}),
        linked: new Map([
          [HUBSPOT, 'meeting-1'],
          [DANA, 'event-dana'],
        ]),
        outcome: outcome({
          values: { title: 'Review', organizer: 'dana@brightwave.io', iCalUID: 'x@google.com' },
          owed: new Map([[DANA, ['iCalUID', 'organizer']]]),
        }),
      };
      expect(owedWrites(linked, calendars)).toEqual([]);
      const withTitle = {
        ...linked,
        outcome: outcome({
          values: linked.outcome.values,
          owed: new Map([[DANA, ['iCalUID', 'title']]]),
        }),
      };
      expect(owedWrites(withTitle, calendars).map((r) => r.fields)).toEqual([{ title: 'Review' }]);
    });

    it('still updates and deletes where the record already is', () => {
      const linked = meeting({ attendees: [] });
      const rows = owedWrites(
        {
          ...linked,
          linked: new Map([
            [HUBSPOT, 'meeting-1'],
            [MARCO, 'event-1'],
          ]),
          outcome: outcome({ values: { title: 'Moved' }, owed: new Map([[MARCO, ['title']]]) }),
        },
        calendars,
      );
      expect(rows.map((r) => [r.connection_id, r.op])).toEqual([[MARCO, 'update']]);
    });
  });

  it('owes nothing to a disconnected target or one that cannot write the type', () => {
    const owed = outcome({ owed: new Map([[HUBSPOT, ['jobTitle']]]) });
    expect(owedWrites(person({ outcome: owed }), [target(HUBSPOT, { status: 'disconnected' })])).toEqual([]);
    expect(
      owedWrites(person({ outcome: owed, linked: new Map([[CALENDAR, 'x']]) }), [
        target(CALENDAR, { provider: 'google-calendar' }),
      ]),
    ).toEqual([]);
  });

  it('a record deleted elsewhere in the batch: each linked target deletes it under its own policy', () => {
    const deleted = person({
      deletedIn: [{ connectionId: HUBSPOT }],
      linked: new Map([
        [HUBSPOT, 'contact-1'],
        [OTHER_HUBSPOT, 'contact-9'],
        ['c-unlink', 'contact-5'],
      ]),
      outcome: outcome({ owed: new Map([[OTHER_HUBSPOT, ['jobTitle']]]) }),
    });
    const rows = owedWrites(deleted, [
      target(HUBSPOT, { deletePolicy: 'delete' }),
      target(OTHER_HUBSPOT, { deletePolicy: 'archive' }),
      target('c-unlink'),
    ]);
    expect(rows).toEqual([
      expect.objectContaining({
        connection_id: OTHER_HUBSPOT,
        op: 'delete',
        external_id: 'contact-9',
        fields: {},
        idempotency_key: deleteKey('e1', OTHER_HUBSPOT),
      }),
    ]);
  });
});
