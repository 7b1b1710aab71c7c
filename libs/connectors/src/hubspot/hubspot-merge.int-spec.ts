import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PushWrite } from '../contract/connector';
import { hubspotConnector } from './hubspot.connector';
import { hubspotTestPortals, TEST_APP_ID } from './testing/hubspot-test-portals';

interface Contact {
  id: string;
  properties: Record<string, string | null>;
}

/**
 * The connector's `merge` write (HubSpot's own merge, through the official SDK) against the
 * emulator: one call, idempotent on retry, refusals mapped onto the closed set, and HubSpot's
 * merge notification read as a redirect of the merged-away record, never a delete.
 */
describe('hubspot connector: merging records in HubSpot', () => {
  const testPortals = hubspotTestPortals('connectors-hubspot-merge', 7_000);
  const { control, receiver } = testPortals;

  async function portal(webhooks = false) {
    const { portalId, ctx, requests, base } = await testPortals.portal(webhooks);
    const uiCreate = (type: string, properties: Record<string, string>) =>
      control<Contact>('POST', `${base}/ui/${type}`, { properties });
    const objects = async (type: string) =>
      (await control<{ results: Contact[] }>('GET', `${base}/objects/${type}`)).results;
    return { portalId, ctx, requests, uiCreate, objects };
  }

  const mergeWrite = (
    entityType: PushWrite['entityType'],
    primary: string,
    merged: string,
    key = `merge-${randomBytes(3).toString('hex')}`,
  ): PushWrite => ({
    op: 'merge',
    entityType,
    externalId: primary,
    mergedExternalId: merged,
    fields: {},
    idempotencyKey: key,
    entityId: randomUUID(),
  });

  it('merges two contacts with one call, before an update that takes the merged one’s address', async () => {
    const { ctx, requests, uiCreate, objects } = await portal();
    const ada = await uiCreate('contacts', { email: 'ada@analytical.example', firstname: 'Ada' });
    const augusta = await uiCreate('contacts', {
      email: 'countess@byron.example',
      firstname: 'Augusta',
      phone: '+44 20 7946 0000',
    });
    const entityId = randomUUID();
    // Given after the merge, as the outbox orders them: the update must still go second, since
    // the address it writes belongs to the other record until the merge.
    const pushed = await hubspotConnector.push(ctx, [
      mergeWrite('person', ada.id, augusta.id, 'm-1'),
      {
        op: 'update',
        entityType: 'person',
        externalId: ada.id,
        fields: { email: 'countess@byron.example', jobTitle: 'Countess' },
        idempotencyKey: 'u-1',
        entityId,
      },
    ]);
    if (!pushed.ok) throw new Error(pushed.error.message);
    expect(pushed.value.map((r) => [r.idempotencyKey, r.externalId])).toEqual([
      ['m-1', ada.id],
      ['u-1', ada.id],
    ]);
    expect(pushed.value[0]?.providerVersion).toEqual(expect.any(String));
    const merges = (await requests()).filter((r) => r.path.endsWith('/merge'));
    expect(merges).toEqual([
      expect.objectContaining({ method: 'POST', path: '/crm/v3/objects/contacts/merge', status: 200 }),
    ]);

    const left = await objects('contacts');
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({
      id: ada.id,
      properties: {
        email: 'countess@byron.example',
        firstname: 'Ada',
        phone: '+44 20 7946 0000',
        jobtitle: 'Countess',
        hs_merged_object_ids: augusta.id,
      },
    });

    // Sent again (its first answer lost, say): the merge is done, so it succeeds with the same receipt.
    const retried = await hubspotConnector.push(ctx, [mergeWrite('person', ada.id, augusta.id, 'm-1')]);
    if (!retried.ok) throw new Error(retried.error.message);
    expect(retried.value).toEqual([expect.objectContaining({ idempotencyKey: 'm-1', externalId: ada.id })]);
    const after = (await requests()).filter((r) => r.path.endsWith('/merge'));
    expect(after.map((r) => r.status)).toEqual([200, 400]);
    expect(await objects('contacts')).toHaveLength(1);
  });

  it('merges companies and deals', async () => {
    const { ctx, uiCreate, objects } = await portal();
    const acme = await uiCreate('companies', { name: 'Acme' });
    const acmeInc = await uiCreate('companies', { name: 'Acme Inc', domain: 'acme.example' });
    const big = await uiCreate('deals', { dealname: 'Big deal' });
    const same = await uiCreate('deals', { dealname: 'Same deal', amount: '100' });
    const pushed = await hubspotConnector.push(ctx, [
      mergeWrite('company', acme.id, acmeInc.id),
      mergeWrite('deal', big.id, same.id),
    ]);
    if (!pushed.ok) throw new Error(pushed.error.message);
    expect(await objects('companies')).toEqual([
      expect.objectContaining({
        id: acme.id,
        properties: expect.objectContaining({ domain: 'acme.example' }),
      }),
    ]);
    expect(await objects('deals')).toEqual([
      expect.objectContaining({ id: big.id, properties: expect.objectContaining({ amount: '100' }) }),
    ]);
  });

  it('maps refusals onto the closed set: unknown records are NotFound, anything else Validation', async () => {
    const { ctx, uiCreate, objects } = await portal();
    const a = await uiCreate('contacts', { email: 'a@refuse.example' });
    const b = await uiCreate('contacts', { email: 'b@refuse.example' });
    const unknown = await hubspotConnector.push(ctx, [mergeWrite('person', a.id, '999999')]);
    expect(!unknown.ok && unknown.error).toMatchObject({ code: 'NotFound', status: 404 });
    const itself = await hubspotConnector.push(ctx, [mergeWrite('person', a.id, a.id)]);
    expect(!itself.ok && itself.error.code).toBe('Validation');
    const meeting = await hubspotConnector.push(ctx, [mergeWrite('meeting', a.id, b.id)]);
    expect(!meeting.ok && meeting.error.code).toBe('Validation');
    // b merged into a by someone else, then a merge the other way: b is a already, so it is refused.
    await control('POST', `/_emulator/hubspot/portals/${ctx.externalAccountId}/ui/contacts/merge`, {
      primaryObjectId: a.id,
      objectIdToMerge: b.id,
    });
    const reversed = await hubspotConnector.push(ctx, [mergeWrite('person', b.id, a.id)]);
    expect(!reversed.ok && reversed.error).toMatchObject({ code: 'Validation', status: 400 });
    expect((await objects('contacts')).map((c) => c.id)).toEqual([a.id]);
  });

  it('makes a merged-away contact again as a record of its own, its address taken off the survivor', async () => {
    const { ctx, requests, uiCreate, objects } = await portal();
    const ada = await uiCreate('contacts', { email: 'ada@again.example', firstname: 'Ada' });
    const augusta = await uiCreate('contacts', { email: 'augusta@again.example', firstname: 'Augusta' });
    const merged = await hubspotConnector.push(ctx, [mergeWrite('person', ada.id, augusta.id)]);
    if (!merged.ok) throw new Error(merged.error.message);
    // Unmerged in Syncline since: the absorbed person is owed a new record, with its own values.
    const entityId = randomUUID();
    const create: PushWrite = {
      op: 'create',
      entityType: 'person',
      fields: { email: 'augusta@again.example', firstName: 'Augusta', lastName: 'Byron' },
      idempotencyKey: `${entityId}.c.create`,
      entityId,
      afterProviderMerge: true,
    };
    const made = await hubspotConnector.push(ctx, [create]);
    if (!made.ok) throw new Error(made.error.message);
    const madeId = made.value[0]?.externalId;
    expect(madeId).not.toBe(ada.id);
    const contacts = await objects('contacts');
    expect(contacts.map((c) => [c.id, c.properties.email, c.properties.firstname]).sort()).toEqual(
      [
        [ada.id, 'ada@again.example', 'Ada'],
        [madeId, 'augusta@again.example', 'Augusta'],
      ].sort(),
    );
    expect(contacts.find((c) => c.id === ada.id)?.properties.hs_additional_emails ?? '').toBe('');
    // Sent again: the same record, and nothing more to take off.
    const again = await hubspotConnector.push(ctx, [create]);
    expect(again.ok && again.value[0]?.externalId).toBe(madeId);
    expect(await objects('contacts')).toHaveLength(2);
    const freed = (await requests()).filter((r) => r.path.startsWith('/contacts/v1/secondary-email'));
    expect(freed.map((r) => [r.method, r.status])).toEqual([['DELETE', 200]]);
  });

  it('reads HubSpot’s merge notification as a redirect of the merged-away record, not a delete', async () => {
    const { ctx, uiCreate } = await portal(true);
    const keep = await uiCreate('contacts', { email: 'keep@hook.example' });
    const fold = await uiCreate('contacts', { email: 'fold@hook.example' });
    const pushed = await hubspotConnector.push(ctx, [mergeWrite('person', keep.id, fold.id)]);
    if (!pushed.ok) throw new Error(pushed.error.message);
    const hook = await receiver().waitFor(
      (r) => r.rawBody.includes('contact.merge') && r.rawBody.includes(`"primaryObjectId":${keep.id}`),
    );
    const outcome = hubspotConnector.parseWebhook(hook, {
      connectionId: ctx.connectionId,
      workspaceId: ctx.workspaceId,
      appId: String(TEST_APP_ID),
    });
    if (!outcome.ok || outcome.value.kind !== 'changes') throw new Error('expected changes');
    const merges = outcome.value.changes.filter((c) => c.op === 'merge');
    expect(merges).toEqual([
      expect.objectContaining({
        entityType: 'person',
        externalId: fold.id,
        fields: { mergedInto: keep.id },
        eventKey: `contacts:${fold.id}:merged-into:${keep.id}`,
        origin: expect.objectContaining({ partial: true, ours: true, changeSource: 'INTEGRATION' }),
      }),
    ]);
    expect(outcome.value.changes.some((c) => c.op === 'delete')).toBe(false);
  });
});
