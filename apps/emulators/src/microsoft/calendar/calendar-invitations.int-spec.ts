import type { Client } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const GOOGLE_UID = 'abc123xyz0987@google.com';

/**
 * What Graph reports as the iCalUId of an invitation from another system, written out by
 * hand: class id, no date, no creation time, reserved zeros, the data's size (little-endian),
 * then `vCal-Uid`, 01 00 00 00, the UID and 00.
 */
function invitationHex(uid: string, date = '00000000'): string {
  const data = `7643616C2D556964${'01000000'}${Buffer.from(uid).toString('hex').toUpperCase()}00`;
  const size = Buffer.alloc(4);
  size.writeUInt32LE(data.length / 2);
  return `040000008200E00074C5B7101A82E008${date}${'0'.repeat(32)}${size.toString('hex').toUpperCase()}${data}`;
}

const ui = (upn: string) => `/_emulator/microsoft/users/${upn}/ui/calendar/events`;

const event = (extra: Json = {}): Json => ({
  subject: 'Pipeline review',
  start: { dateTime: '2030-03-14T09:00:00', timeZone: 'UTC' },
  end: { dateTime: '2030-03-14T10:00:00', timeZone: 'UTC' },
  ...extra,
});

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

describe('an invitation from another system (control API "ui" create with iCalUId)', () => {
  it('reports the iCalUId as a Global Object ID carrying the UID, the same in every mailbox it reached', async () => {
    const lee = await ms.account('lee@contoso.example');
    const invited = await ms.expectControl<Json>(201, 'POST', ui(dana.upn), event({ iCalUId: GOOGLE_UID }));
    expectGraph('event', invited);
    expect(invited.iCalUId).toBe(invitationHex(GOOGLE_UID));
    expect(invited.type).toBe('singleInstance');

    const fetched = (await graph.api(`/me/events/${invited.id}`).get()) as Json;
    expect(fetched.iCalUId).toBe(invitationHex(GOOGLE_UID));
    const page = (await graph
      .api('/me/calendarView/delta?startDateTime=2030-03-01T00:00:00Z&endDateTime=2030-04-01T00:00:00Z')
      .get()) as Json;
    expect((page.value as Json[]).map((e) => e.iCalUId)).toEqual([invitationHex(GOOGLE_UID)]);

    const leesCopy = await ms.expectControl<Json>(201, 'POST', ui(lee.upn), event({ iCalUId: GOOGLE_UID }));
    expect(leesCopy.id).not.toBe(invited.id);
    expect(leesCopy.iCalUId).toBe(invited.iCalUId);
    const other = await ms.expectControl<Json>(
      201,
      'POST',
      ui(dana.upn),
      event({ iCalUId: `x${GOOGLE_UID}` }),
    );
    expect(other.iCalUId).toBe(invitationHex(`x${GOOGLE_UID}`));
  });

  it("gives an event made in Outlook its own id (16 opaque bytes, a creation time), and Graph's create ignores an iCalUId", async () => {
    const before = Date.now();
    const made = await ms.expectControl<Json>(201, 'POST', ui(dana.upn), event());
    const posted = (await graph.api('/me/events').post(event({ iCalUId: GOOGLE_UID }))) as Json;
    const after = Date.now();
    for (const e of [made, posted]) {
      const id = String(e.iCalUId);
      expect(id).toMatch(/^040000008200E00074C5B7101A82E00800000000[0-9A-F]{16}0{16}10000000[0-9A-F]{32}$/);
      // The creation time is a FILETIME, little-endian: 100 ns intervals since 1601.
      const created = Number(
        Buffer.from(id.slice(40, 56), 'hex').readBigUInt64LE() / 10_000n - 11_644_473_600_000n,
      );
      expect(created).toBeGreaterThanOrEqual(before);
      expect(created).toBeLessThanOrEqual(after);
    }
    expect(posted.iCalUId).not.toBe(made.iCalUId);
    expect(posted.iCalUId).not.toContain(Buffer.from(GOOGLE_UID).toString('hex').toUpperCase());
  });

  it('puts each occurrence’s original date in its iCalUId, the series’ own having none', async () => {
    const master = await ms.expectControl<Json>(
      201,
      'POST',
      ui(dana.upn),
      event({
        iCalUId: GOOGLE_UID,
        start: { dateTime: '2030-03-04T10:00:00', timeZone: 'UTC' },
        end: { dateTime: '2030-03-04T10:15:00', timeZone: 'UTC' },
        recurrence: {
          pattern: { type: 'weekly', interval: 1, daysOfWeek: ['Monday', 'Wednesday'] },
          range: { type: 'numbered', startDate: '2030-03-04', numberOfOccurrences: 3 },
        },
      }),
    );
    expect(master).toMatchObject({ type: 'seriesMaster', iCalUId: invitationHex(GOOGLE_UID) });
    const page = (await graph
      .api('/me/calendarView/delta?startDateTime=2030-03-01T00:00:00Z&endDateTime=2030-04-01T00:00:00Z')
      .get()) as Json;
    // 2030 is 0x07EE; 4, 6 and 11 March.
    expect((page.value as Json[]).map((e) => [e.type, e.iCalUId])).toEqual([
      ['occurrence', invitationHex(GOOGLE_UID, '07EE0304')],
      ['occurrence', invitationHex(GOOGLE_UID, '07EE0306')],
      ['occurrence', invitationHex(GOOGLE_UID, '07EE030B')],
    ]);
  });

  it('shows who sent an invitation as its organizer, the owner then being an attendee', async () => {
    const invited = await ms.expectControl<Json>(
      201,
      'POST',
      ui(dana.upn),
      event({
        iCalUId: GOOGLE_UID,
        organizer: { emailAddress: { name: 'Ana Ortiz', address: 'Ana@Acme.example' } },
      }),
    );
    expectGraph('event', invited);
    const fetched = (await graph.api(`/me/events/${invited.id}`).get()) as Json;
    expect(fetched).toMatchObject({
      isOrganizer: false,
      organizer: { emailAddress: { name: 'Ana Ortiz', address: 'ana@acme.example' } },
      responseStatus: { response: 'accepted' },
    });
    // Her own meeting, as before, and Graph's own create cannot claim another organizer.
    const own = (await graph
      .api('/me/events')
      .post(event({ organizer: { emailAddress: { address: 'x@y.example' } } }))) as Json;
    expect(own).toMatchObject({ isOrganizer: true, organizer: { emailAddress: { address: dana.upn } } });
    const bad = await ms.control(
      'POST',
      ui(dana.upn),
      event({ iCalUId: GOOGLE_UID, organizer: { emailAddress: {} } }),
    );
    expect(bad.status).toBe(400);
  });

  it('refuses an iCalUId no Global Object ID can carry', async () => {
    for (const iCalUId of [42, '', '  ', ` ${GOOGLE_UID}`, 'abc\u0000def@google.com']) {
      const refused = await ms.control<{ error: Json }>('POST', ui(dana.upn), event({ iCalUId }));
      expect(refused.status, String(iCalUId)).toBe(400);
      expect(refused.body.error.code).toBe('ErrorInvalidRequest');
      expect(refused.body.error.message).toMatch(/^Invalid value for property 'iCalUId'/);
    }
    const state = await ms.expectControl<{ events: Json[] }>(
      200,
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/calendar/events`,
    );
    expect(state.events).toEqual([]);
  });
});
