import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from './testing/graph-schema';
import { graphRefusal, type Json, MicrosoftHarness } from './testing/microsoft-harness';
import { PERSONAL_TENANT } from './user.store';

let ms: MicrosoftHarness;

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
});

describe('who a token is for: /me and /organization', () => {
  it('names the user by object id and the tenant by id, and keeps the id when the sign-in name changes', async () => {
    const tenantId = '5b3c1f1e-8d0a-4f7e-9c61-0f2d7a1b9e44';
    await ms.expectControl(201, 'POST', '/_emulator/microsoft/users', {
      userPrincipalName: 'ana@contoso.example',
      displayName: 'Ana Lima',
      tenantId,
    });
    const { client, userId } = await ms.account('ana@contoso.example');
    const me = (await client.api('/me').get()) as Json;
    expectGraph('user', me);
    expect(me).toMatchObject({
      id: userId,
      userPrincipalName: 'ana@contoso.example',
      displayName: 'Ana Lima',
      mail: 'ana@contoso.example',
    });
    const organization = (await client.api('/organization').get()) as { value: Json[] };
    expect(organization.value.map((o) => o.id)).toEqual([tenantId]);

    await ms.expectControl(200, 'PATCH', '/_emulator/microsoft/users/ana@contoso.example', {
      userPrincipalName: 'ana.lima@contoso.example',
    });
    const renamed = (await client.api('/me').get()) as Json;
    expect(renamed).toMatchObject({ id: userId, userPrincipalName: 'ana.lima@contoso.example' });
  });

  it('lists no organization for a personal account', async () => {
    await ms.expectControl(201, 'POST', '/_emulator/microsoft/users', {
      userPrincipalName: 'kim@outlook.example',
      tenantId: PERSONAL_TENANT,
    });
    const { client } = await ms.account('kim@outlook.example');
    expect(((await client.api('/organization').get()) as { value: Json[] }).value).toEqual([]);
  });

  it('needs User.Read', async () => {
    const { client } = await ms.account('lee@contoso.example', ['Calendars.Read']);
    expect((await graphRefusal(client.api('/me').get())).status).toBe(403);
    expect((await graphRefusal(client.api('/organization').get())).status).toBe(403);
  });
});
