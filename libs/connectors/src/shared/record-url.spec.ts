import { describe, expect, it } from 'vitest';
import { sourceRecordUrl } from './record-url';

const urls = { hubspotAppUrl: 'https://app.hubspot.com/' };

describe('sourceRecordUrl', () => {
  it("opens a HubSpot contact, company or deal on its portal's record page", () => {
    const ref = { provider: 'hubspot', externalId: '501', account: '12345' };
    expect(sourceRecordUrl({ ...ref, entityType: 'person' }, urls)).toBe(
      'https://app.hubspot.com/contacts/12345/record/0-1/501',
    );
    expect(sourceRecordUrl({ ...ref, entityType: 'company' }, urls)).toBe(
      'https://app.hubspot.com/contacts/12345/record/0-2/501',
    );
    expect(sourceRecordUrl({ ...ref, entityType: 'deal' }, urls)).toBe(
      'https://app.hubspot.com/contacts/12345/record/0-3/501',
    );
  });

  it('points at the configured HubSpot app (the emulator in the demo)', () => {
    const ref = { provider: 'hubspot', entityType: 'person', externalId: '7', account: '99' };
    expect(sourceRecordUrl(ref, { hubspotAppUrl: 'http://127.0.0.1:4010' })).toBe(
      'http://127.0.0.1:4010/contacts/99/record/0-1/7',
    );
  });

  it('escapes ids that are not plain digits', () => {
    const ref = { provider: 'hubspot', entityType: 'person', externalId: 'a/b?c', account: '1' };
    expect(sourceRecordUrl(ref, urls)).toBe('https://app.hubspot.com/contacts/1/record/0-1/a%2Fb%3Fc');
  });

  it('opens a Google Calendar event by its eid, a Gmail message and a task', () => {
    const meeting = {
      provider: 'google-calendar',
      entityType: 'meeting',
      externalId: 'evt1',
      account: 'ana@acme.com',
    };
    const url = new URL(sourceRecordUrl(meeting, urls)!);
    expect(Buffer.from(url.searchParams.get('eid')!, 'base64url').toString()).toBe('evt1 ana@acme.com');
    expect(
      sourceRecordUrl(
        { provider: 'gmail', entityType: 'email_activity', externalId: '18c', account: 'ana@acme.com' },
        urls,
      ),
    ).toBe('https://mail.google.com/mail/?authuser=ana%40acme.com#all/18c');
    expect(
      sourceRecordUrl(
        { provider: 'google-tasks', entityType: 'task', externalId: 'list1/task9', account: 'ana@acme.com' },
        urls,
      ),
    ).toBe('https://tasks.google.com/task/task9');
  });

  it('opens Outlook items on Outlook on the web, for work or personal accounts, and To Do tasks by their own id', () => {
    const work = '5b3c1f1e-8d0a-4f7e-9c61-0f2d7a1b9e44:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
    const personal = '9188040d-6c67-4c5b-b112-36a304b66dad:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
    const ref = (provider: string, externalId: string, account: string) => ({
      provider,
      entityType: 'meeting',
      externalId,
      account,
    });
    expect(sourceRecordUrl(ref('microsoft-calendar', 'AAMkAD=', work), urls)).toBe(
      'https://outlook.office.com/calendar/item/AAMkAD%3D',
    );
    expect(sourceRecordUrl(ref('microsoft-mail', 'AAMkAG/x', personal), urls)).toBe(
      'https://outlook.live.com/mail/deeplink/read/AAMkAG%2Fx',
    );
    expect(sourceRecordUrl(ref('microsoft-todo', 'AAMkList/AAMkTask', work), urls)).toBe(
      'https://to-do.office.com/tasks/id/AAMkTask/details',
    );
  });

  it('has no page for a removed connection or a type the provider does not show', () => {
    expect(
      sourceRecordUrl({ provider: null, entityType: 'person', externalId: '1', account: null }, urls),
    ).toBeNull();
    expect(
      sourceRecordUrl({ provider: 'hubspot', entityType: 'meeting', externalId: '1', account: '5' }, urls),
    ).toBeNull();
  });
});
