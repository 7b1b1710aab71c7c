import type { BrowserContext, Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, newContext, signInByLink, useBrowser } from './support/browser';
import { useSystem, waitFor } from './support/system';

// An admin connects a salesperson's Microsoft 365 in Chromium: the connect dialog, Microsoft's
// account picker and consent page (the emulated identity platform, over HTTPS), back on the
// connections page with one connection per product chosen, named by the person's address,
// Live once their Outlook meeting with a CRM contact is a meeting in the CRM.

const PORTAL = 3601;
const UPN = 'marco.rossi@contoso-web-e2e.example';
const ADMIN_EMAIL = 'admin@e2e.test';
const BEA = 'bea.buyer@acme-web-e2e.example';
const DAY = 86_400_000;

interface ConnectionBody {
  id: string;
  provider: string;
  externalAccountId: string;
  accountAddress: string | null;
  displayName: string | null;
  status: string;
}

describe('an admin connects Microsoft 365 through its consent page, in Chromium', () => {
  const system = useSystem({ label: 'web_microsoft', workers: 1 });
  const browser = useBrowser();
  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  let tenantId = '';
  let userId = '';

  const card = (page: Page, name: string): Locator => page.getByRole('article', { name, exact: true });
  const connections = async () =>
    (await system().api<{ data: ConnectionBody[] }>('GET', '/api/v1/connections')).body.data;

  beforeAll(async () => {
    const s = system();
    const ms = s.emulator.microsoft;
    if (!ms) throw new Error('the emulators started without Microsoft 365');
    const user = await ms.createUser({ upn: UPN, displayName: 'Marco Rossi' });
    [tenantId, userId] = [user.tenantId, user.id];
    const at = Math.floor(Date.now() / DAY) * DAY + 5 * DAY + 9 * 3_600_000;
    await ms.calendar.create(UPN, {
      subject: 'Roadmap with Acme',
      start: { dateTime: new Date(at).toISOString().slice(0, 19), timeZone: 'UTC' },
      end: { dateTime: new Date(at + 1_800_000).toISOString().slice(0, 19), timeZone: 'UTC' },
      attendees: [{ type: 'required', emailAddress: { name: 'Bea Buyer', address: BEA } }],
    });
    const portal = await s.emulator.hubspot.createPortal({ portalId: PORTAL, webhooks: true });
    await s.emulator.hubspot.createContact(PORTAL, { email: BEA, firstname: 'Bea', lastname: 'Buyer' });
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
    const context = await newContext(browser(), s);
    const page = await context.newPage();
    try {
      await signInByLink(page, s, ADMIN_EMAIL, '/admin/connections');
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
      admin = await context.storageState();
    } finally {
      await context.close();
    }
  }, 120_000);

  it('picks the account, accepts the permissions, and gets Outlook Calendar and To Do, named by address and Live', async () => {
    if (!admin) throw new Error('the admin did not sign in (beforeAll failed)');
    const context = await newContext(browser(), system(), undefined, admin);
    const page = await context.newPage();
    try {
      await page.goto('/admin/connections');
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Connect a system' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Connect a system' });
      await dialog.getByRole('radio', { name: 'Microsoft 365' }).check();
      // Outlook Calendar is ticked first; the salesperson's tasks are added, the mail left out.
      expect(await dialog.getByRole('checkbox', { name: /Outlook Calendar/ }).isChecked()).toBe(true);
      expect(await dialog.getByRole('checkbox', { name: /Outlook Mail/ }).isChecked()).toBe(false);
      await dialog.getByRole('checkbox', { name: /To Do/ }).check();
      await expectAccessible(page, 'the connect dialog, Microsoft 365');
      await dialog.getByRole('button', { name: 'Continue to Microsoft' }).click();

      await page.waitForURL((url) => url.origin === system().urls.microsoft);
      await page.getByRole('heading', { name: 'Pick an account' }).waitFor();
      await page.getByRole('link', { name: `Marco Rossi (${UPN})` }).click();
      await page.getByRole('heading', { name: 'Permissions requested' }).waitFor();
      await page.getByRole('button', { name: 'Accept' }).click();
      await page.waitForURL(
        (url) => url.origin === system().urls.api && url.pathname === '/admin/connections',
      );

      const calendarName = `Outlook Calendar ${UPN}`;
      await card(page, calendarName).waitFor();
      await card(page, `Microsoft To Do ${UPN}`).waitFor();
      const made = (await connections()).filter((c) => c.provider.startsWith('microsoft-'));
      expect(made.map((c) => [c.provider, c.externalAccountId, c.accountAddress]).sort()).toEqual([
        ['microsoft-calendar', `${tenantId}:${userId}`.toLowerCase(), UPN],
        ['microsoft-todo', `${tenantId}:${userId}`.toLowerCase(), UPN],
      ]);
      await expect
        .poll(() => card(page, calendarName).getByTestId('connection-status').textContent(), {
          timeout: 60_000,
        })
        .toBe('Live');
      // Live means synced: the Outlook meeting with Bea is a meeting in the CRM.
      await waitFor(() => system().emulator.hubspot.objects(PORTAL, 'meetings'), {
        until: (meetings) => meetings.some((m) => m.properties.hs_meeting_title === 'Roadmap with Acme'),
        timeoutMs: 45_000,
        describe: 'the Outlook meeting in the CRM',
      });
      await expectAccessible(page, 'the connections page with Microsoft 365');
    } finally {
      await context.close();
    }
  });
});
