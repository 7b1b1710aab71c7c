import { type Client, ResponseType } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const TAG = 'String {66f5a359-4659-4830-9070-00047ec6ac6e} Name SynclineOrigin';
const expandTag = `singleValueExtendedProperties($filter=id eq '${TAG}')`;

const event = (day: number, extra: Json = {}): Json => ({
  subject: `Meeting ${day}`,
  body: { contentType: 'text', content: `Agenda for the ${day}th` },
  start: { dateTime: `2030-03-${String(day).padStart(2, '0')}T09:00:00`, timeZone: 'UTC' },
  end: { dateTime: `2030-03-${String(day).padStart(2, '0')}T10:00:00`, timeZone: 'UTC' },
  ...extra,
});

/** Creates an event through the SDK and checks the answer's shape. */
async function create(body: Json): Promise<Json> {
  const created = (await graph.api('/me/events').post(body)) as Json;
  expectGraph('event', created);
  return created;
}

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

describe('POST and GET /me/events', () => {
  it('creates an event as Graph returns it, and reads it back whole or by $select', async () => {
    const created = await create(
      event(14, {
        location: { displayName: "Harry's Bar" },
        attendees: [{ emailAddress: { address: 'lee@fabrikam.example', name: 'Lee' }, type: 'Required' }],
      }),
    );
    expect(created).toMatchObject({
      '@odata.etag': `W/"${created.changeKey}"`,
      type: 'singleInstance',
      seriesMasterId: null,
      subject: 'Meeting 14',
      bodyPreview: 'Agenda for the 14th',
      isAllDay: false,
      isCancelled: false,
      isOrganizer: true,
      showAs: 'busy',
      isOnlineMeeting: false,
      onlineMeetingProvider: 'unknown',
      onlineMeeting: null,
      recurrence: null,
      start: { dateTime: '2030-03-14T09:00:00.0000000', timeZone: 'UTC' },
      end: { dateTime: '2030-03-14T10:00:00.0000000', timeZone: 'UTC' },
      originalStartTimeZone: 'UTC',
      location: {
        displayName: "Harry's Bar",
        locationType: 'default',
        uniqueId: "Harry's Bar",
        uniqueIdType: 'private',
      },
      locations: [{ displayName: "Harry's Bar", locationType: 'default', uniqueIdType: 'unknown' }],
      attendees: [
        {
          type: 'required',
          status: { response: 'none', time: '0001-01-01T00:00:00Z' },
          emailAddress: { name: 'Lee', address: 'lee@fabrikam.example' },
        },
      ],
      organizer: { emailAddress: { name: 'dana', address: 'dana@contoso.example' } },
      responseStatus: { response: 'organizer', time: '0001-01-01T00:00:00Z' },
    });
    // A text body comes back as HTML, as Outlook stores it.
    expect(created.body).toEqual({
      contentType: 'html',
      content: expect.stringContaining('<div class="PlainText">Agenda for the 14th</div>'),
    });
    expect(created.iCalUId).toMatch(/^040000008200E00074C5B7101A82E00800000000[0-9A-F]+$/);
    expect(created.webLink).toBe(
      `https://outlook.office365.com/owa/?itemid=${encodeURIComponent(String(created.id))}&exvsurl=1&path=/calendar/item`,
    );
    expect(created).not.toHaveProperty('transactionId');

    const fetched = (await graph.api(`/me/events/${created.id}`).get()) as Json;
    expectGraph('event', fetched);
    expect(fetched).toEqual({ ...created, '@odata.context': expect.stringContaining('/events/$entity') });

    const text = (await graph
      .api(`/me/events/${created.id}`)
      .header('Prefer', 'outlook.body-content-type="text"')
      .get()) as Json;
    expect(text.body).toEqual({ contentType: 'text', content: 'Agenda for the 14th' });

    const selected = (await graph.api(`/me/events/${created.id}`).select(['subject', 'start']).get()) as Json;
    expectGraph('event', selected);
    expect(Object.keys(selected).sort()).toEqual(['@odata.context', '@odata.etag', 'id', 'start', 'subject']);
    const unknown = await graphRefusal(graph.api(`/me/events/${created.id}`).select('nonsense').get());
    expect(unknown).toMatchObject({ status: 400, code: 'BadRequest' });
  });

  it('returns the first event when a create is retried with its transactionId', async () => {
    const body = event(3, { transactionId: '7E163156-7762-4BEB-A1C6-729EA81755A7' });
    const first = await create(body);
    const retried = await create({ ...body, subject: 'Meeting 3 (retried)' });
    expect(retried.id).toBe(first.id);
    expect(retried.subject).toBe('Meeting 3');
    expect(retried.transactionId).toBe('7E163156-7762-4BEB-A1C6-729EA81755A7');
    const other = await create(event(3, { transactionId: 'another-one' }));
    expect(other.id).not.toBe(first.id);

    const list = (await graph.api('/me/events').get()) as Json;
    expectGraph('eventCollectionResponse', list);
    expect((list.value as Json[]).map((e) => e.id)).toEqual([first.id, other.id]);
  });

  it('refuses bodies Graph refuses: unknown properties, unknown zones, offsets, end before start', async () => {
    expect(await graphRefusal(graph.api('/me/events').post(event(1, { colour: 'red' })))).toMatchObject({
      status: 400,
      code: 'RequestBodyRead',
    });
    const mars = await graphRefusal(
      graph
        .api('/me/events')
        .post(event(1, { start: { dateTime: '2030-03-01T09:00:00', timeZone: 'Mars/Olympus' } })),
    );
    expect({ status: mars.status, code: mars.code, message: mars.message }).toEqual({
      status: 400,
      code: 'TimeZoneNotSupportedException',
      message:
        "A valid TimeZone value must be specified. The following TimeZone value is not supported: 'Mars/Olympus'.",
    });
    expect(
      await graphRefusal(
        graph
          .api('/me/events')
          .post(event(1, { start: { dateTime: '2030-03-01T09:00:00+02:00', timeZone: 'Europe/Paris' } })),
      ),
    ).toMatchObject({ status: 400, code: 'ErrorInvalidRequest' });
    expect(
      await graphRefusal(
        graph.api('/me/events').post(event(1, { end: { dateTime: '2030-03-01T08:00:00', timeZone: 'UTC' } })),
      ),
    ).toMatchObject({ status: 400, code: 'ErrorInvalidRequest' });
  });
});

describe('PATCH and DELETE /me/events/{id}', () => {
  it('patches only what is given, with a new changeKey, and answers 412 to a stale If-Match', async () => {
    const created = await create(event(5, { categories: ['Blue category'] }));
    const patched = (await graph
      .api(`/me/events/${created.id}`)
      .header('If-Match', String(created['@odata.etag']))
      .patch({ subject: 'Moved to the big room', location: { displayName: 'Big room' } })) as Json;
    expectGraph('event', patched);
    expect(patched).toMatchObject({
      id: created.id,
      subject: 'Moved to the big room',
      body: created.body,
      categories: ['Blue category'],
      start: created.start,
      location: { displayName: 'Big room' },
    });
    expect(patched.changeKey).not.toBe(created.changeKey);
    expect(patched['@odata.etag']).toBe(`W/"${patched.changeKey}"`);

    const stale = await graphRefusal(
      graph
        .api(`/me/events/${created.id}`)
        .header('If-Match', String(created['@odata.etag']))
        .patch({ subject: 'Lost update' }),
    );
    expect(stale).toMatchObject({ status: 412, code: 'ErrorIrresolvableConflict' });
    const staleDelete = await graphRefusal(
      graph.api(`/me/events/${created.id}`).header('If-Match', String(created['@odata.etag'])).delete(),
    );
    expect(staleDelete.status).toBe(412);
    expect(((await graph.api(`/me/events/${created.id}`).get()) as Json).subject).toBe(
      'Moved to the big room',
    );

    const deleted = (await graph
      .api(`/me/events/${created.id}`)
      .responseType(ResponseType.RAW)
      .delete()) as Response;
    expect(deleted.status).toBe(204);
    expect(await graphRefusal(graph.api(`/me/events/${created.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api(`/me/events/${created.id}`).patch({ subject: 'x' }))).toMatchObject({
      status: 404,
    });
    expect(await graphRefusal(graph.api('/me/events/not-an-id').get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidIdMalformed',
    });
  });
});

describe('online meetings and all-day events', () => {
  it('keeps an online meeting once made one, and an all-day event at midnight in any zone', async () => {
    const meeting = await create(event(6, { isOnlineMeeting: true }));
    expect(meeting).toMatchObject({
      isOnlineMeeting: true,
      onlineMeetingProvider: 'teamsForBusiness',
      onlineMeeting: { joinUrl: expect.stringMatching(/^https:\/\/teams\.microsoft\.com\/l\/meetup-join\//) },
    });
    // Outlook ignores later changes to isOnlineMeeting: the meeting stays online.
    const patched = (await graph.api(`/me/events/${meeting.id}`).patch({ isOnlineMeeting: false })) as Json;
    expect([patched.isOnlineMeeting, patched.onlineMeeting]).toEqual([true, meeting.onlineMeeting]);

    const holiday = await create({
      subject: 'Holiday',
      isAllDay: true,
      start: { dateTime: '2030-03-10T00:00:00', timeZone: 'Pacific Standard Time' },
      end: { dateTime: '2030-03-11T00:00:00', timeZone: 'Pacific Standard Time' },
    });
    expect([holiday.start, holiday.end]).toEqual([
      { dateTime: '2030-03-10T00:00:00.0000000', timeZone: 'UTC' },
      { dateTime: '2030-03-11T00:00:00.0000000', timeZone: 'UTC' },
    ]);
    const inTokyo = (await graph
      .api(`/me/events/${holiday.id}`)
      .header('Prefer', 'outlook.timezone="Tokyo Standard Time"')
      .get()) as Json;
    expect(inTokyo.end).toEqual({ dateTime: '2030-03-11T00:00:00.0000000', timeZone: 'Tokyo Standard Time' });
    const notMidnight = await graphRefusal(
      graph.api('/me/events').post({
        isAllDay: true,
        start: { dateTime: '2030-03-10T01:00:00', timeZone: 'UTC' },
        end: { dateTime: '2030-03-11T00:00:00', timeZone: 'UTC' },
      }),
    );
    expect(notMidnight).toMatchObject({ status: 400, code: 'ErrorPropertyValidationFailure' });
  });
});

describe('singleValueExtendedProperties', () => {
  it('keeps a tag written on create and returns it only when $expand asks for it by id', async () => {
    const created = await create(
      event(8, { singleValueExtendedProperties: [{ id: TAG, value: 'syncline:p-42' }] }),
    );
    expect(created).not.toHaveProperty('singleValueExtendedProperties');
    const plain = (await graph.api(`/me/events/${created.id}`).get()) as Json;
    expect(plain).not.toHaveProperty('singleValueExtendedProperties');

    const tagged = (await graph.api(`/me/events/${created.id}`).expand(expandTag).get()) as Json;
    expectGraph('event', tagged);
    expect(tagged.singleValueExtendedProperties).toEqual([{ id: TAG, value: 'syncline:p-42' }]);
    // The GUID matches without case, as Exchange matches it.
    const upper = TAG.replace('66f5a359-4659-4830-9070-00047ec6ac6e', '66F5A359-4659-4830-9070-00047EC6AC6E');
    const byUpper = (await graph
      .api(`/me/events/${created.id}`)
      .expand(`singleValueExtendedProperties($filter=id eq '${upper}')`)
      .get()) as Json;
    expect(byUpper.singleValueExtendedProperties).toEqual([{ id: TAG, value: 'syncline:p-42' }]);
    const otherName = TAG.replace('SynclineOrigin', 'Other');
    const other = (await graph
      .api(`/me/events/${created.id}`)
      .expand(`singleValueExtendedProperties($filter=id eq '${otherName}')`)
      .get()) as Json;
    expect(other).not.toHaveProperty('singleValueExtendedProperties');

    const untagged = await create(event(9));
    const page = (await graph.api('/me/events').expand(expandTag).get()) as Json;
    expectGraph('eventCollectionResponse', page);
    expect((page.value as Json[]).map((e) => [e.id, e.singleValueExtendedProperties])).toEqual([
      [created.id, [{ id: TAG, value: 'syncline:p-42' }]],
      [untagged.id, undefined],
    ]);
  });
});

describe('GET /me/events paging', () => {
  it('pages with $top through absolute https nextLinks that the SDK follows', async () => {
    const ids: unknown[] = [];
    for (let day = 1; day <= 5; day++) ids.push((await create(event(day))).id);
    const pages: Json[] = [];
    let page = (await graph.api('/me/events').top(2).select('subject').get()) as Json;
    for (;;) {
      expectGraph('eventCollectionResponse', page);
      pages.push(page);
      const next = page['@odata.nextLink'];
      if (typeof next !== 'string') break;
      expect(next.startsWith(`${ms.url}/v1.0/me/events?`)).toBe(true);
      page = (await graph.api(next).get()) as Json;
    }
    expect(pages.map((p) => (p.value as Json[]).length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((p) => (p.value as Json[]).map((e) => e.id))).toEqual(ids);
    // $select travels in the link: every page has the same shape.
    expect(Object.keys((pages[2]!.value as Json[])[0]!).sort()).toEqual(['@odata.etag', 'id', 'subject']);
  });
});

describe('the token guard', () => {
  it('answers 401 InvalidAuthenticationToken to a token it did not issue, and to none', async () => {
    const stranger = ms.client('eyJ0eXAi.not-a-token-we-issued');
    const refused = await graphRefusal(stranger.api('/me/events').get());
    expect(refused).toMatchObject({ status: 401, code: 'InvalidAuthenticationToken' });

    const bare = await fetch(`${ms.url}/v1.0/me/events`);
    expect(bare.status).toBe(401);
    const body = (await bare.json()) as Json;
    expectGraph('odataError', body);
    expect(body).toMatchObject({
      error: { code: 'InvalidAuthenticationToken', message: 'Access token is empty.' },
    });
  });
});
