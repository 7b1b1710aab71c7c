import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphFailure, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;

type BatchAnswer = {
  responses: { id: string; status: number; headers: Record<string, string>; body?: Json }[];
};

const event = {
  subject: 'Batched',
  start: { dateTime: '2030-03-14T09:00:00', timeZone: 'UTC' },
  end: { dateTime: '2030-03-14T10:00:00', timeZone: 'UTC' },
};

const byId = (answer: BatchAnswer) => new Map(answer.responses.map((r) => [r.id, r]));

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  dana = await ms.account('dana@contoso.example');
});

describe('POST /$batch', () => {
  it('runs the parts with the caller token, after their dependencies; a failed one gives 424', async () => {
    const answer = (await dana.client.api('/$batch').post({
      requests: [
        {
          id: '1',
          method: 'POST',
          url: '/me/events',
          headers: { 'content-type': 'application/json' },
          body: event,
        },
        { id: '2', method: 'GET', url: '/me/events', dependsOn: ['1'] },
        { id: '3', method: 'GET', url: 'me/events/AAMkAGI2TG93AAA=' },
        { id: '4', method: 'DELETE', url: '/me/events/AAMkAGI2TG93AAA=', dependsOn: ['3'] },
      ],
    })) as BatchAnswer;
    const parts = byId(answer);
    expect(parts.get('1')?.status).toBe(201);
    expectGraph('event', parts.get('1')?.body);
    expect(parts.get('2')?.status).toBe(200);
    const listed = parts.get('2')?.body?.value as Json[];
    expect(listed.map((e) => e.id)).toEqual([parts.get('1')?.body?.id]);
    expect(parts.get('3')?.status).toBeGreaterThanOrEqual(400);
    expect(parts.get('4')).toMatchObject({ status: 424, body: { error: { code: 'FailedDependency' } } });
  });

  it('refuses 21 requests with 400', async () => {
    const requests = Array.from({ length: 21 }, (_, i) => ({
      id: String(i + 1),
      method: 'GET',
      url: '/me/events',
    }));
    const { status, body } = await graphFailure(dana.client.api('/$batch').post({ requests }));
    expect(status).toBe(400);
    expectGraph('odataError', body);
    const logged = await ms.expectControl<{ path: string }[]>(
      200,
      'GET',
      `/_emulator/requests?account=${dana.upn}`,
    );
    expect(logged.filter((r) => r.path === '/v1.0/me/events')).toEqual([]);
  });

  it('keeps a 429 inside the 200', async () => {
    await ms.expectControl(200, 'POST', '/_emulator/microsoft/limits', { perTenMinutes: 2 });
    const requests = ['a', 'b', 'c'].map((id, i) => ({
      id,
      method: 'GET',
      url: '/me/events',
      dependsOn: i ? [String.fromCharCode(96 + i)] : undefined,
    }));
    const answer = (await dana.client.api('/$batch').post({ requests })) as BatchAnswer;
    const parts = byId(answer);
    expect([parts.get('a')?.status, parts.get('b')?.status]).toEqual([200, 200]);
    expect(parts.get('c')).toMatchObject({ status: 429, headers: { 'retry-after': expect.any(String) } });
    expect(parts.get('c')?.body).toMatchObject({ error: { code: 'ApplicationThrottled' } });
  });
});
