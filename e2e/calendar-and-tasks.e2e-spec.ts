import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import type { CalendarEvent, GoogleTask, HubspotRecord } from './support/emulator-client';
import { type SyncSystem, sleep, startSystem, waitFor } from './support/system';

// One HubSpot portal (webhooks to our API) and one Google user with Calendar and Tasks
// connected, through the real API and workers processes. Every assertion reads the emulators'
// state or request logs, except one recorded fact (the conflict of scenario 4); otherwise the
// database is read only to explain a failure.
//
// HubSpot has no webhooks for meetings and tasks: those reach us by the scheduled pull, as do
// Google Tasks. Calendar changes come by watch notification (and the scheduled pull).

const PORTAL = 3301;
const EMAIL = 'casey.rep@syncline-e2e.example';

/** HubSpot datetimes may be ISO strings or epoch-ms strings: compare instants. */
const instant = (value: string | null | undefined): number | undefined => {
  if (value === null || value === undefined || value === '') return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isNaN(n) ? undefined : n;
};
const sameInstant = (a: string | null | undefined, b: string) => instant(a) === Date.parse(b);

describe('calendar and tasks, two-way with HubSpot', () => {
  let s: SyncSystem;
  const meetings = () => s.emulator.hubspot.objects(PORTAL, 'meetings');
  const hsTasks = () => s.emulator.hubspot.objects(PORTAL, 'tasks');
  const liveEvents = async (): Promise<CalendarEvent[]> =>
    (await s.emulator.google.calendar.list(EMAIL)).filter((e) => e.status !== 'cancelled');
  const liveTasks = async (): Promise<GoogleTask[]> =>
    (await s.emulator.google.tasks.list(EMAIL)).filter((t) => !t.deleted);
  const meetingTitled = async (title: string): Promise<HubspotRecord | undefined> =>
    (await meetings()).find((m) => m.properties.hs_meeting_title === title);

  // Filled in as the scenarios go.
  let movedEvent: CalendarEvent; // scenario 1: made and moved in Calendar
  let hubspotMeetingOfEvent: HubspotRecord; // its HubSpot meeting
  let googleTask: GoogleTask; // scenario 3

  const dumpState = async () => {
    await dumpSyncState(s, 'calendar and tasks');
    console.log(
      'calendar',
      JSON.stringify(await s.emulator.google.calendar.list(EMAIL), null, 1),
      'google tasks',
      JSON.stringify(await s.emulator.google.tasks.list(EMAIL), null, 1),
      'hubspot meetings',
      JSON.stringify(await meetings(), null, 1),
      'hubspot tasks',
      JSON.stringify(await hsTasks(), null, 1),
    );
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'cal_tasks', workers: 1, pullIntervalMs: 1_000 });
    const portal = await s.emulator.hubspot.createPortal({ portalId: PORTAL, webhooks: true });
    const google = await s.emulator.google.createUser(EMAIL);
    const hour = 3_600_000;
    await s.connect(
      'hubspot',
      String(PORTAL),
      {
        accessToken: portal.accessToken,
        refreshToken: portal.refreshToken,
        expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
      },
      { displayName: 'CRM' },
    );
    const googleCredentials = {
      accessToken: google.accessToken,
      refreshToken: google.refreshToken,
      expiresAt: new Date(Date.now() + hour).toISOString(),
    };
    await s.connect('google-calendar', EMAIL, googleCredentials, { displayName: 'Calendar' });
    await s.connect('google-tasks', EMAIL, googleCredentials, { displayName: 'Tasks' });
    await waitFor(
      async () => (await s.api<{ data: { status: string }[] }>('GET', '/api/v1/connections')).body.data,
      {
        until: (list) => list.length === 3 && list.every((c) => c.status === 'live'),
        timeoutMs: 30_000,
        describe: 'the three connections to be live',
      },
    );
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('1. a meeting moved in Google Calendar moves the HubSpot meeting made for it', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    movedEvent = await s.emulator.google.calendar.create(EMAIL, {
      summary: 'Intro call with Acme',
      description: 'First call',
      start: { dateTime: '2030-03-04T09:00:00.000Z' },
      end: { dateTime: '2030-03-04T09:30:00.000Z' },
      attendees: [{ email: 'buyer@acme.example', displayName: 'Bea Buyer' }],
    });
    hubspotMeetingOfEvent = await waitFor(() => meetingTitled('Intro call with Acme'), {
      timeoutMs: 30_000,
      describe: 'the HubSpot meeting for the Calendar event',
    }).then((m) => m!);
    expect(
      sameInstant(hubspotMeetingOfEvent.properties.hs_meeting_start_time, '2030-03-04T09:00:00.000Z'),
    ).toBe(true);

    await s.emulator.google.calendar.move(
      EMAIL,
      movedEvent.id,
      '2030-03-04T13:00:00.000Z',
      '2030-03-04T13:45:00.000Z',
    );
    const moved = await waitFor(() => meetingTitled('Intro call with Acme'), {
      until: (m) =>
        sameInstant(m?.properties.hs_meeting_start_time, '2030-03-04T13:00:00.000Z') &&
        sameInstant(m?.properties.hs_meeting_end_time, '2030-03-04T13:45:00.000Z'),
      timeoutMs: 30_000,
      describe: 'the HubSpot meeting to move to 13:00–13:45',
    });
    expect(moved!.id).toBe(hubspotMeetingOfEvent.id);
  });

  it('2. a meeting booked in HubSpot appears in Google Calendar with the same title and times', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    await s.emulator.hubspot.createMeeting(PORTAL, {
      hs_meeting_title: 'Demo for Globex',
      hs_meeting_start_time: '2030-03-05T15:00:00.000Z',
      hs_meeting_end_time: '2030-03-05T16:00:00.000Z',
      hs_timestamp: '2030-03-05T15:00:00.000Z',
    });
    const event = await waitFor(
      async () => (await liveEvents()).find((e) => e.summary === 'Demo for Globex'),
      { timeoutMs: 30_000, describe: 'a Calendar event for the HubSpot meeting' },
    );
    expect(Date.parse(event!.start!.dateTime!)).toBe(Date.parse('2030-03-05T15:00:00.000Z'));
    expect(Date.parse(event!.end!.dateTime!)).toBe(Date.parse('2030-03-05T16:00:00.000Z'));
  });

  it('3. a task completed in Google Tasks is COMPLETED in HubSpot', async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    googleTask = await s.emulator.google.tasks.create(EMAIL, {
      title: 'Send proposal to Acme',
      notes: 'Pricing v2',
      due: '2030-03-06T00:00:00.000Z',
    });
    const created = await waitFor(
      async () => (await hsTasks()).find((t) => t.properties.hs_task_subject === 'Send proposal to Acme'),
      { timeoutMs: 30_000, describe: 'the HubSpot task for the Google task' },
    );
    expect(created!.properties.hs_task_status).not.toBe('COMPLETED');

    await s.emulator.google.tasks.complete(EMAIL, googleTask.id);
    const completed = await waitFor(
      async () => (await hsTasks()).find((t) => t.properties.hs_task_subject === 'Send proposal to Acme'),
      {
        until: (t) => t?.properties.hs_task_status === 'COMPLETED',
        timeoutMs: 30_000,
        describe: 'the HubSpot task to be COMPLETED',
      },
    );
    expect(completed!.id).toBe(created!.id);
  });

  it('4. a burst of older Calendar edits arriving late does not overwrite a newer HubSpot edit', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const eventPath = `/calendar/v3/calendars/primary/events/${movedEvent.id}`;
    const writesToEvent = async () =>
      (await s.emulator.requests({ service: 'google', account: EMAIL })).filter(
        (r) => (r.method === 'PATCH' || r.method === 'PUT') && r.path.split('?')[0] === eventPath,
      );
    const failedBefore = (await writesToEvent()).filter((r) => r.status >= 500).length;

    // Google answers 500 to every call of this user: Calendar is neither read nor written
    // until the fault is cleared, so the Calendar edits below reach us only after the HubSpot one.
    await s.emulator.fault({ service: 'google', kind: 'server-error', account: EMAIL });
    try {
      await s.emulator.google.calendar.update(EMAIL, movedEvent.id, {
        summary: 'Quarterly review (draft)',
        start: { dateTime: '2030-03-04T10:00:00.000Z' },
        end: { dateTime: '2030-03-04T11:00:00.000Z' },
      });
      await sleep(20);
      await s.emulator.google.calendar.move(
        EMAIL,
        movedEvent.id,
        '2030-03-04T10:30:00.000Z',
        '2030-03-04T11:30:00.000Z',
      );
      await sleep(20);
      await s.emulator.google.calendar.update(EMAIL, movedEvent.id, {
        summary: 'Quarterly review',
        location: 'Room 4',
        start: { dateTime: '2030-03-04T11:00:00.000Z' },
        end: { dateTime: '2030-03-04T12:00:00.000Z' },
      });
      await sleep(50);
      // Made after every Calendar edit: the newest value of the times.
      await s.emulator.hubspot.updateMeeting(PORTAL, hubspotMeetingOfEvent.id, {
        hs_meeting_start_time: '2030-03-04T16:00:00.000Z',
        hs_meeting_end_time: '2030-03-04T17:00:00.000Z',
      });
      // The HubSpot edit has been taken in when we try (and fail) to write it to Calendar.
      await waitFor(async () => (await writesToEvent()).filter((r) => r.status >= 500).length, {
        until: (n) => n > failedBefore,
        timeoutMs: 30_000,
        describe: 'an attempt to write the HubSpot edit to the Calendar event (refused with 500)',
      });
    } finally {
      await s.emulator.clearFaults();
    }

    const expected = {
      title: 'Quarterly review',
      location: 'Room 4',
      start: '2030-03-04T16:00:00.000Z',
      end: '2030-03-04T17:00:00.000Z',
    };
    const bothAgree = async () => {
      const event = (await liveEvents()).find((e) => e.id === movedEvent.id);
      const meeting = (await meetings()).find((m) => m.id === hubspotMeetingOfEvent.id);
      return {
        calendar: {
          title: event?.summary,
          location: event?.location,
          start: event?.start?.dateTime && new Date(event.start.dateTime).toISOString(),
          end: event?.end?.dateTime && new Date(event.end.dateTime).toISOString(),
        },
        hubspot: {
          title: meeting?.properties.hs_meeting_title,
          location: meeting?.properties.hs_meeting_location,
          start: new Date(instant(meeting?.properties.hs_meeting_start_time) ?? 0).toISOString(),
          end: new Date(instant(meeting?.properties.hs_meeting_end_time) ?? 0).toISOString(),
        },
      };
    };
    await waitFor(bothAgree, {
      until: (v) =>
        JSON.stringify(v.calendar) === JSON.stringify(expected) &&
        JSON.stringify(v.hubspot) === JSON.stringify(expected),
      timeoutMs: 45_000,
      describe: 'Calendar and HubSpot to show the Calendar title/location and the HubSpot times',
    });
    // And it stays so: no late flip back to the older Calendar times.
    await sleep(4_000);
    expect(await bothAgree()).toEqual({ calendar: expected, hubspot: expected });
    // Recorded, not silent: the times were a true conflict, settled for the later HubSpot edit.
    const conflicts = await s.query<{ field: string; resolution: { winner?: { value?: unknown } } | null }>(
      `SELECT field, resolution FROM merge_conflict WHERE field IN ('startAt', 'endAt')`,
    );
    expect(conflicts.map((c) => [c.field, c.resolution?.winner?.value]).sort()).toEqual(
      expect.arrayContaining([
        ['endAt', expected.end],
        ['startAt', expected.start],
      ]),
    );
  });

  it('5. after all of that, every meeting and task exists exactly once in each system', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const hsMeetings = await meetings();
    expect(hsMeetings.map((m) => m.properties.hs_meeting_title).sort()).toEqual([
      'Demo for Globex',
      'Quarterly review',
    ]);
    const events = await liveEvents();
    expect(events.map((e) => e.summary).sort()).toEqual(['Demo for Globex', 'Quarterly review']);
    expect((await hsTasks()).map((t) => t.properties.hs_task_subject)).toEqual(['Send proposal to Acme']);
    expect((await liveTasks()).map((t) => t.title)).toEqual(['Send proposal to Acme']);
  });
});
