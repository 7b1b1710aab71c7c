import { type Client, ResponseType } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const MARCH = '/me/calendarView/delta?startDateTime=2030-03-01T00:00:00Z&endDateTime=2030-04-01T00:00:00Z';
const PAGE_OF_2 = 'odata.maxpagesize=2';

const event = (day: number, extra: Json = {}): Json => ({
  subject: `Meeting ${day}`,
  start: { dateTime: `2030-03-${String(day).padStart(2, '0')}T09:00:00`, timeZone: 'UTC' },
  end: { dateTime: `2030-03-${String(day).padStart(2, '0')}T10:00:00`, timeZone: 'UTC' },
  ...extra,
});

const create = async (body: Json): Promise<Json> => (await graph.api('/me/events').post(body)) as Json;

interface Round {
  pages: Json[];
  deltaLink: string;
  /** Every entry of the round: items and removals, in order. */
  entries: Json[];
}

/** One delta round the way a connector runs it: follow nextLink to the end, keep the deltaLink. */
async function round(first: string, prefer = PAGE_OF_2): Promise<Round> {
  const pages: Json[] = [];
  let url = first;
  for (;;) {
    const page = (await graph.api(url).header('Prefer', prefer).get()) as Json;
    expectGraph('eventCollectionResponse', page);
    pages.push(page);
    const next = page['@odata.nextLink'];
    const delta = page['@odata.deltaLink'];
    expect([typeof next, typeof delta].sort(), 'a nextLink or a deltaLink, never both').toEqual([
      'string',
      'undefined',
    ]);
    if (typeof delta === 'string') {
      expect(delta.startsWith(`${ms.url}/v1.0/me/calendarView/delta?$deltatoken=`)).toBe(true);
      return { pages, deltaLink: delta, entries: pages.flatMap((p) => p.value as Json[]) };
    }
    expect(String(next).startsWith(`${ms.url}/v1.0/me/calendarView/delta?$skiptoken=`)).toBe(true);
    url = String(next);
  }
}

/** A round's entries as [id, what]: the subject of an item, or `removed`. */
const changes = (r: Round) =>
  r.entries.map((e) => [e.id, e['@removed'] ? `removed:${(e['@removed'] as Json).reason}` : e.subject]);

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  dana = await ms.account('dana@contoso.example');
  graph = dana.client;
});

describe('calendarView delta rounds', () => {
  it('pages the initial round by odata.maxpagesize to a deltaLink, then reports a change, a delete and a move out of range', async () => {
    const ids: string[] = [];
    for (const day of [2, 4, 6, 8, 10]) ids.push(String((await create(event(day))).id));
    const april = await create({
      ...event(1),
      start: { dateTime: '2030-04-02T09:00:00', timeZone: 'UTC' },
      end: { dateTime: '2030-04-02T10:00:00', timeZone: 'UTC' },
    });

    const first = (await graph
      .api(MARCH)
      .header('Prefer', PAGE_OF_2)
      .responseType(ResponseType.RAW)
      .get()) as Response;
    expect(first.headers.get('preference-applied')).toBe('odata.maxpagesize=2');
    const initial = await round(MARCH);
    expect(initial.pages.map((p) => (p.value as Json[]).length)).toEqual([2, 2, 1]);
    expect(initial.entries.map((e) => e.id)).toEqual(ids);
    expect(initial.entries.map((e) => e['@odata.type'])).toEqual(Array(5).fill('#microsoft.graph.event'));
    expect(initial.entries.map((e) => e.id)).not.toContain(april.id);

    await graph.api(`/me/events/${ids[1]}`).patch({ subject: 'Renamed' });
    await graph.api(`/me/events/${ids[2]}`).delete();
    await graph.api(`/me/events/${ids[3]}`).patch({
      start: { dateTime: '2030-05-08T09:00:00', timeZone: 'UTC' },
      end: { dateTime: '2030-05-08T10:00:00', timeZone: 'UTC' },
    });
    const added = await create(event(20));

    const next = await round(initial.deltaLink);
    expect(changes(next)).toEqual([
      [ids[1], 'Renamed'],
      [ids[2], 'removed:deleted'],
      [ids[3], 'removed:deleted'],
      [added.id, 'Meeting 20'],
    ]);
    expect(next.entries[1]).toEqual({
      '@odata.type': '#microsoft.graph.event',
      id: ids[2],
      '@removed': { reason: 'deleted' },
    });

    const quiet = await round(next.deltaLink);
    expect(quiet.entries).toEqual([]);
    // The range came from the first call only; the tokens carried it since.
    expect(next.deltaLink).not.toContain('startDateTime');
  });

  it('requires the range on the first call only', async () => {
    expect(await graphRefusal(graph.api('/me/calendarView/delta').get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidParameter',
      message:
        'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
    });
    expect(
      await graphRefusal(
        graph.api('/me/calendarView/delta?startDateTime=2030-03-01T00:00:00Z&endDateTime=soon').get(),
      ),
    ).toMatchObject({ status: 400, code: 'ErrorInvalidParameter' });
    expect(await graphRefusal(graph.api(`${MARCH}&$filter=subject eq 'x'`).get())).toMatchObject({
      status: 400,
    });
  });

  it('answers syncStateNotFound once the sync state is evicted, by fault or by the control API', async () => {
    for (const day of [3, 5, 7]) await create(event(day));
    const initial = await round(MARCH);
    const midRound = String(
      ((await graph.api(MARCH).header('Prefer', PAGE_OF_2).get()) as Json)['@odata.nextLink'],
    );

    await ms.fault({ kind: 'invalidate-cursors', account: dana.upn, count: 1 });
    expect(await graphRefusal(graph.api(initial.deltaLink).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    // Every older token is dead too, mid-round ones included; a new round starts over and works.
    expect(await graphRefusal(graph.api(midRound).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    const resync = await round(MARCH);
    expect(resync.entries).toHaveLength(3);
    expect((await round(resync.deltaLink)).entries).toEqual([]);

    await ms.expectControl(204, 'POST', `/_emulator/microsoft/users/${dana.upn}/calendar/invalidate-delta`, {
      status: 400,
    });
    expect(await graphRefusal(graph.api(resync.deltaLink).get())).toMatchObject({
      status: 400,
      code: 'syncStateNotFound',
    });

    const again = await round(MARCH);
    await ms.expectControl(204, 'POST', `/_emulator/microsoft/users/${dana.upn}/calendar/invalidate-delta`, {
      status: 410,
      restart: true,
    });
    const gone = await graphRefusal(graph.api(again.deltaLink).get());
    expect(gone).toMatchObject({ status: 410, code: 'syncStateNotFound' });
    const location = gone.headers?.get('location');
    expect(location).toBe(
      `${ms.url}/v1.0/me/calendarView/delta?startDateTime=2030-03-01T00%3A00%3A00Z&endDateTime=2030-04-01T00%3A00%3A00Z`,
    );
    expect((await round(String(location))).entries).toHaveLength(3);
  });

  it('shows a change made in Outlook (the control API) in the next round', async () => {
    const mine = await create(event(12));
    const initial = await round(MARCH);
    const ui = `/_emulator/microsoft/users/${dana.upn}/ui/calendar/events`;
    const theirs = await ms.expectControl<Json>(201, 'POST', ui, event(13, { subject: 'Booked in Outlook' }));
    expectGraph('event', theirs);
    await ms.expectControl(200, 'PATCH', `${ui}/${mine.id}`, { subject: 'Renamed in Outlook' });
    const next = await round(initial.deltaLink);
    expect(changes(next)).toEqual([
      [theirs.id, 'Booked in Outlook'],
      [mine.id, 'Renamed in Outlook'],
    ]);

    await ms.expectControl(204, 'DELETE', `${ui}/${theirs.id}`);
    expect(changes(await round(next.deltaLink))).toEqual([[theirs.id, 'removed:deleted']]);
    const state = await ms.expectControl<{ events: Json[]; deletedIds: string[] }>(
      200,
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/calendar/events`,
    );
    expect(state.events.map((e) => e.subject)).toEqual(['Renamed in Outlook']);
    expect(state.deletedIds).toEqual([theirs.id]);
  });
});

describe('calendarView delta preferences', () => {
  it('converts times into outlook.timezone and says which preferences it applied', async () => {
    // 09:00 in Berlin on 15 March 2030 is 08:00 UTC, and 01:00 in Los Angeles (already on summer time).
    const created = await create(
      event(15, {
        start: { dateTime: '2030-03-15T09:00:00', timeZone: 'W. Europe Standard Time' },
        end: { dateTime: '2030-03-15T09:30:00', timeZone: 'W. Europe Standard Time' },
      }),
    );
    expect(created.start).toEqual({ dateTime: '2030-03-15T08:00:00.0000000', timeZone: 'UTC' });
    expect(created.originalStartTimeZone).toBe('W. Europe Standard Time');

    const prefer = 'outlook.timezone="Pacific Standard Time", IdType="ImmutableId", odata.maxpagesize=5';
    const raw = (await graph
      .api(MARCH)
      .header('Prefer', prefer)
      .responseType(ResponseType.RAW)
      .get()) as Response;
    expect(raw.headers.get('preference-applied')).toBe(
      'outlook.timezone="Pacific Standard Time", IdType="ImmutableId", odata.maxpagesize=5',
    );
    const page = (await raw.json()) as Json;
    expectGraph('eventCollectionResponse', page);
    expect((page.value as Json[])[0]).toMatchObject({
      id: created.id,
      start: { dateTime: '2030-03-15T01:00:00.0000000', timeZone: 'Pacific Standard Time' },
      end: { dateTime: '2030-03-15T01:30:00.0000000', timeZone: 'Pacific Standard Time' },
    });
    const iana = (await round(MARCH, 'outlook.timezone="Asia/Tokyo"')).entries[0];
    expect(iana?.start).toEqual({ dateTime: '2030-03-15T17:00:00.0000000', timeZone: 'Asia/Tokyo' });
  });
});

describe('recurring series in calendarView delta', () => {
  const weekly = (extra: Json = {}): Json => ({
    subject: 'Stand-up',
    start: { dateTime: '2030-03-04T10:00:00', timeZone: 'Pacific Standard Time' },
    end: { dateTime: '2030-03-04T10:15:00', timeZone: 'Pacific Standard Time' },
    recurrence: {
      pattern: { type: 'weekly', interval: 1, daysOfWeek: ['Monday', 'Wednesday'] },
      range: { type: 'numbered', startDate: '2030-03-04', numberOfOccurrences: 6 },
    },
    ...extra,
  });
  const WINDOW = '/me/calendarView/delta?startDateTime=2030-03-05T00:00:00Z&endDateTime=2030-03-19T00:00:00Z';

  it("returns a weekly series' occurrences in range, each with its own id and iCalUId, never the master", async () => {
    const master = await create(weekly());
    expectGraph('event', master);
    expect(master).toMatchObject({
      type: 'seriesMaster',
      recurrence: {
        pattern: {
          type: 'weekly',
          interval: 1,
          daysOfWeek: ['monday', 'wednesday'],
          firstDayOfWeek: 'sunday',
          index: 'first',
        },
        range: {
          type: 'numbered',
          startDate: '2030-03-04',
          endDate: '0001-01-01',
          numberOfOccurrences: 6,
          recurrenceTimeZone: 'Pacific Standard Time',
        },
      },
    });
    const { entries } = await round(WINDOW);
    // 10:00 in Los Angeles: 18:00 UTC before summer time (10 March 2030), 17:00 after.
    expect(entries.map((e) => [e.type, e.seriesMasterId, (e.start as Json).dateTime])).toEqual([
      ['occurrence', master.id, '2030-03-06T18:00:00.0000000'],
      ['occurrence', master.id, '2030-03-11T17:00:00.0000000'],
      ['occurrence', master.id, '2030-03-13T17:00:00.0000000'],
      ['occurrence', master.id, '2030-03-18T17:00:00.0000000'],
    ]);
    expect(new Set(entries.map((e) => e.id)).size).toBe(4);
    expect(entries.map((e) => e.id)).not.toContain(master.id);
    expect(new Set(entries.map((e) => e.iCalUId)).size).toBe(4);
    expect(entries.every((e) => e.recurrence === null && e.subject === 'Stand-up')).toBe(true);

    const one = (await graph.api(`/me/events/${entries[1]!.id}`).get()) as Json;
    expectGraph('event', one);
    expect(one).toMatchObject({
      id: entries[1]!.id,
      type: 'occurrence',
      seriesMasterId: master.id,
      originalStart: '2030-03-11T17:00:00Z',
    });
  });

  it('reports a cancelled occurrence as removed, and a series edit as changed occurrences', async () => {
    const master = await create(weekly());
    const initial = await round(WINDOW, 'odata.maxpagesize=3');
    const [, second, third] = initial.entries;
    await graph.api(`/me/events/${second!.id}`).delete();
    await graph.api(`/me/events/${third!.id}`).patch({ subject: 'Stand-up (moved room)' });
    expect(await graphRefusal(graph.api(`/me/events/${second!.id}`).get())).toMatchObject({ status: 404 });

    const next = await round(initial.deltaLink, 'odata.maxpagesize=3');
    expect(changes(next)).toEqual([
      [initial.entries[0]!.id, 'Stand-up'],
      [third!.id, 'Stand-up (moved room)'],
      [initial.entries[3]!.id, 'Stand-up'],
      [second!.id, 'removed:deleted'],
    ]);
    expect(next.entries[1]).toMatchObject({ type: 'exception', seriesMasterId: master.id });

    // A daily series, every other day until 10 March: 5, 7 and 9 March fall in the window.
    await graph.api(`/me/events/${master.id}`).delete();
    const daily = await create({
      ...weekly(),
      subject: 'Water the plants',
      recurrence: {
        pattern: { type: 'daily', interval: 2 },
        range: { type: 'endDate', startDate: '2030-03-03', endDate: '2030-03-10' },
      },
    });
    const after = await round(next.deltaLink, 'odata.maxpagesize=10');
    expect(
      after.entries
        .filter((e) => e['@removed'])
        .map((e) => e.id)
        .sort(),
    ).toEqual([initial.entries[0]!.id, third!.id, initial.entries[3]!.id].sort());
    expect(
      after.entries.filter((e) => !e['@removed']).map((e) => [e.seriesMasterId, (e.start as Json).dateTime]),
    ).toEqual([
      [daily.id, '2030-03-05T18:00:00.0000000'],
      [daily.id, '2030-03-07T18:00:00.0000000'],
      [daily.id, '2030-03-09T18:00:00.0000000'],
    ]);
  });

  it('refuses a pattern it does not emulate rather than expanding it wrongly', async () => {
    const refused = await graphRefusal(
      graph.api('/me/events').post(
        weekly({
          recurrence: {
            pattern: { type: 'absoluteMonthly', interval: 1, dayOfMonth: 4 },
            range: { type: 'noEnd', startDate: '2030-03-04' },
          },
        }),
      ),
    );
    expect(refused).toMatchObject({
      status: 400,
      code: 'BadRequest',
      message: "The emulator supports the daily and weekly recurrence patterns only, not 'absoluteMonthly'.",
    });
  });
});
