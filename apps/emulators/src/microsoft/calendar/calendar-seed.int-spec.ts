import type { Client } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const seed = () => `/_emulator/microsoft/users/${dana.upn}/seed/calendar`;

/** Every event of one calendarView delta round over [start, end), 100 a page, and the pages it took. */
async function readRound(start: string, end: string): Promise<{ events: Json[]; pages: number }> {
  const events: Json[] = [];
  let url = `/me/calendarView/delta?startDateTime=${start}&endDateTime=${end}`;
  for (let pages = 1; ; pages++) {
    const page = (await graph.api(url).header('Prefer', 'odata.maxpagesize=100').get()) as Json;
    expectGraph('eventCollectionResponse', page);
    events.push(...(page.value as Json[]));
    if (typeof page['@odata.deltaLink'] === 'string') return { events, pages };
    url = String(page['@odata.nextLink']);
  }
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

describe('seeding a calendar (control API)', () => {
  it('makes count single events spread over the range, which calendarView delta reads through the SDK', async () => {
    const made = await ms.expectControl<Json>(201, 'POST', seed(), {
      count: 250,
      from: '2030-03-01T00:00:00Z',
      to: '2030-04-01T00:00:00Z',
    });
    expect(made).toEqual({ count: 250, from: '2030-03-01T00:00:00.000Z', to: '2030-04-01T00:00:00.000Z' });

    const { events, pages } = await readRound('2030-03-01T00:00:00Z', '2030-04-01T00:00:00Z');
    expect(pages).toBe(3);
    expect(events).toHaveLength(250);
    expect(new Set(events.map((e) => e.id)).size).toBe(250);
    expect(new Set(events.map((e) => e.iCalUId)).size).toBe(250);
    expect(new Set(events.map((e) => e.subject)).size).toBe(250);
    for (const e of events) {
      expect(e.type).toBe('singleInstance');
      expect(e.isOrganizer).toBe(true);
      expect((e.attendees as Json[]).length).toBeGreaterThan(0);
      const start = Date.parse(`${(e.start as Json).dateTime as string}Z`);
      expect(start).toBeGreaterThanOrEqual(Date.parse('2030-03-01T00:00:00Z'));
      expect(start).toBeLessThan(Date.parse('2030-04-01T00:00:00Z'));
    }
    const starts = events.map((e) => (e.start as Json).dateTime as string);
    expect(starts[0]).toBe('2030-03-01T00:00:00.0000000');
    // Spread over the month, not piled on one day.
    expect(new Set(starts.map((s) => s.slice(0, 10))).size).toBe(31);
    // Only what is in a view's range is in it.
    expect((await readRound('2030-03-01T00:00:00Z', '2030-03-02T00:00:00Z')).events.length).toBeLessThan(20);
  });

  it('spreads the events over the 180 days either side of now when no range is given', async () => {
    const made = await ms.expectControl<{ count: number; from: string; to: string }>(201, 'POST', seed(), {
      count: 10,
    });
    expect(made.count).toBe(10);
    const days = (Date.parse(made.to) - Date.parse(made.from)) / 86_400_000;
    expect(days).toBe(360);
    const round = await readRound(made.from, made.to);
    expect(round.events).toHaveLength(10);
  });

  it('refuses a bad body with 400 and an unknown mailbox with 404', async () => {
    for (const body of [
      {},
      { count: 0 },
      { count: 1.5 },
      { count: '10' },
      { count: 100_001 },
      { count: 5, from: 'yesterday' },
      { count: 5, from: '2030-04-01T00:00:00Z', to: '2030-03-01T00:00:00Z' },
      { count: 5, series: true },
    ])
      expect((await ms.control('POST', seed(), body)).status, JSON.stringify(body)).toBe(400);
    expect(
      (
        await ms.control('POST', '/_emulator/microsoft/users/nobody@contoso.example/seed/calendar', {
          count: 1,
        })
      ).status,
    ).toBe(404);
    expect(await ms.control<Json>('GET', `/_emulator/microsoft/users/${dana.upn}/calendar/events`)).toEqual({
      status: 200,
      body: { events: [], deletedIds: [] },
    });
  });
});
