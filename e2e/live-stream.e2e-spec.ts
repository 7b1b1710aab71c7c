import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenedStream, openEventStream } from '../apps/sync-api/src/stream/testing/sse-client';
import { type SyncSystem, startSystem, waitFor } from './support/system';

// A salesperson's page holds GET /api/v1/stream open; a contact edited in HubSpot reaches it
// as `record.changed` within a second: HubSpot webhook → API → change log → sync stage →
// NOTIFY on commit → the API's listener → the stream.

const PORTAL = 3201;
const EMAIL = 'katherine.johnson@langley.example';
const LATENCY_BUDGET_MS = 1_000;

interface PersonBody {
  id: string;
  version: number;
  fields: Record<string, unknown>;
}

describe('live stream of record changes', () => {
  let s: SyncSystem;
  let stream: OpenedStream | undefined;

  const person = async (): Promise<PersonBody | undefined> => {
    const res = await s.api<{ data: PersonBody[] }>('GET', `/api/v1/people?email=${EMAIL}`);
    return res.status === 200 ? res.body.data[0] : undefined;
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'live_stream' });
    const grant = await s.emulator.hubspot.createPortal({ portalId: PORTAL, webhooks: true });
    await s.emulator.hubspot.createContact(PORTAL, {
      email: EMAIL,
      firstname: 'Katherine',
      lastname: 'Johnson',
      jobtitle: 'Computer',
    });
    await s.connect(
      'hubspot',
      String(PORTAL),
      {
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken,
        expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
      },
      { displayName: 'CRM' },
    );
  }, 120_000);

  afterAll(async () => {
    stream?.close();
    await s?.stop();
  });

  it('delivers record.changed for a contact edited in HubSpot within a second of the edit', async ({
    onTestFailed,
  }) => {
    onTestFailed(() => {
      s.dumpLogs('live stream');
      console.log('events on the stream:', stream?.events);
    });
    const synced = await waitFor(person, {
      until: (p) => p?.fields.jobTitle === 'Computer',
      timeoutMs: 60_000,
      describe: 'the contact to be synced',
    });
    const contact = (await s.emulator.hubspot.objects(PORTAL, 'contacts')).find(
      (c) => c.properties.email === EMAIL,
    );
    expect(contact).toBeDefined();

    const opened = await openEventStream(`${s.urls.api}/api/v1/stream?types=person`, {
      authorization: `Bearer ${s.workspace.apiKey}`,
    });
    if (!('opened' in opened)) throw new Error(`stream refused: ${JSON.stringify(opened.refused)}`);
    stream = opened.opened;
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);

    // Let the backfill's last changes to the person pass, so that only the edit can answer.
    const quiet = async () => {
      const before = stream!.events.length;
      await new Promise((r) => setTimeout(r, 1_000));
      return stream!.events.length === before;
    };
    await waitFor(quiet, { timeoutMs: 20_000, intervalMs: 0, describe: 'a second without changes' });
    const settled = (await person())!;
    const seen = stream.events.length;

    const updatedAt = performance.now();
    await s.emulator.hubspot.updateContact(PORTAL, contact!.id, { jobtitle: 'Aerospace Technologist' });
    const changed = await stream.next(
      (e) => e.event === 'record.changed' && JSON.parse(e.data).id === synced!.id,
      10_000,
      seen,
    );
    const latencyMs = Math.round(changed.receivedAt - updatedAt);
    console.log(`record.changed arrived ${latencyMs} ms after the HubSpot update`);

    const data = JSON.parse(changed.data) as { id: string; type: string; version: number };
    expect(data).toEqual({ id: synced!.id, type: 'person', version: expect.any(Number) });
    expect(data.version).toBeGreaterThan(settled.version);
    expect(latencyMs).toBeLessThanOrEqual(LATENCY_BUDGET_MS);
    // The announced version is the edit: reading the record shows it.
    const after = await waitFor(person, {
      until: (p) => (p?.version ?? 0) >= data.version,
      describe: 'the record at the announced version',
    });
    expect(after?.fields.jobTitle).toBe('Aerospace Technologist');
  });
});
