import { Client } from '@hubspot/api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators } from '../emulators';
import { HubspotHarness } from './testing/hubspot-harness';

type Json = Record<string, unknown>;

describe('HubSpot emulator: control API through startEmulators', () => {
  let running: RunningEmulators;

  const control = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> => {
    const response = await fetch(`${running.hubspotUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  };

  beforeAll(async () => {
    running = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  });
  afterAll(async () => {
    await running.close();
  });

  it('creates a portal, inspects state without rate limits, changes limits, and resets', async () => {
    const created = await control('POST', '/_emulator/hubspot/portals', {
      portalId: 101,
      appId: 5001,
      clientSecret: 'shh',
      limits: { per10s: 1, searchPerSecond: 5 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      portalId: 101,
      appId: 5001,
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    // Posting it again updates its settings and issues a fresh grant; another app is a conflict.
    const again = await control('POST', '/_emulator/hubspot/portals', {
      portalId: 101,
      appId: 5001,
      clientSecret: 'shh',
    });
    expect(again.status).toBe(200);
    expect(again.body.accessToken).not.toBe(created.body.accessToken);
    const otherApp = await control('POST', '/_emulator/hubspot/portals', {
      portalId: 101,
      appId: 6001,
      clientSecret: 'x',
    });
    expect(otherApp.status).toBe(409);

    const client = new Client({
      accessToken: String(created.body.accessToken),
      basePath: running.hubspotUrl,
    });
    await client.crm.contacts.basicApi.create({ properties: { email: 'one@example.com' }, associations: [] });
    const ui = await control('POST', '/_emulator/hubspot/portals/101/ui/contacts', {
      properties: { email: 'two@example.com' },
    });
    expect(ui.status).toBe(201);
    // The window (1 per 10 s) is spent, but inspection does not count.
    for (let i = 0; i < 3; i++) {
      const state = await control('GET', '/_emulator/hubspot/portals/101/objects/contacts');
      expect((state.body.results as Json[]).map((r) => (r.properties as Json).email)).toEqual([
        'one@example.com',
        'two@example.com',
      ]);
    }
    await expect(client.crm.contacts.basicApi.getPage()).rejects.toMatchObject({ code: 429 });

    const patched = await control('PATCH', '/_emulator/hubspot/portals/101', {
      limits: { per10s: 100 },
      webhookUrl: 'http://127.0.0.1:9/hook',
    });
    expect(patched.body).toMatchObject({
      limits: { per10s: 100, searchPerSecond: 5 },
      webhookUrl: 'http://127.0.0.1:9/hook',
    });
    await expect(client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();

    const log = await control('GET', '/_emulator/requests?service=hubspot&account=101');
    expect(log.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: '/crm/v3/objects/contacts', status: 429 })]),
    );

    expect((await control('POST', '/_emulator/reset')).status).toBe(204);
    expect((await control('GET', '/_emulator/hubspot/portals/101')).status).toBe(404);
  });

  it('deletes through the UI route as CRM_UI and merges through it', async () => {
    await control('POST', '/_emulator/hubspot/portals', { portalId: 202, appId: 5001, clientSecret: 's' });
    const a = await control('POST', '/_emulator/hubspot/portals/202/ui/contacts', {
      properties: { email: 'a@ui.test' },
    });
    const b = await control('POST', '/_emulator/hubspot/portals/202/ui/contacts', {
      properties: { email: 'b@ui.test' },
    });
    const merged = await control('POST', '/_emulator/hubspot/portals/202/ui/contacts/merge', {
      primaryObjectId: a.body.id,
      objectIdToMerge: b.body.id,
    });
    expect(merged.body).toMatchObject({ id: a.body.id, properties: { hs_merged_object_ids: b.body.id } });
    expect(
      (await control('DELETE', `/_emulator/hubspot/portals/202/ui/contacts/${String(a.body.id)}`)).status,
    ).toBe(204);
    const state = await control(
      'GET',
      '/_emulator/hubspot/portals/202/objects/contacts?includeArchived=true',
    );
    expect(state.body.results).toEqual([expect.objectContaining({ id: a.body.id, archived: true })]);
  });

  it("shows a record's page where the app's source links open it, and 404 for one it does not hold", async () => {
    await control('POST', '/_emulator/hubspot/portals', { portalId: 303, appId: 5001, clientSecret: 's' });
    const ada = await control('POST', '/_emulator/hubspot/portals/303/ui/contacts', {
      properties: { email: 'ada@page.test', firstname: 'Ada <script>' },
    });
    const page = await fetch(`${running.hubspotUrl}/contacts/303/record/0-1/${String(ada.body.id)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('ada@page.test');
    expect(html).toContain('Ada &lt;script&gt;');
    expect(html).not.toContain('<script>');
    expect((await fetch(`${running.hubspotUrl}/contacts/303/record/0-2/${String(ada.body.id)}`)).status).toBe(
      404,
    );
    expect((await fetch(`${running.hubspotUrl}/contacts/999/record/0-1/1`)).status).toBe(404);
  });
});

describe('HubSpot emulator: determinism', () => {
  it('hands out the same ids and tokens under the same seed', async () => {
    const run = async () => {
      const harness = await HubspotHarness.start({ seed: 99 });
      try {
        const portal = await harness.createPortal({ portalId: 303 });
        const created = await portal.client.crm.contacts.batchApi.create({
          inputs: [1, 2, 3].map((n) => ({ properties: { email: `${n}@seed.test` }, associations: [] })),
        });
        return { token: portal.accessToken, ids: created.results.map((r) => r.id) };
      } finally {
        await harness.close();
      }
    };
    expect(await run()).toEqual(await run());
  });
});
