import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GraphAccount, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;

/** A raw call (no SDK RetryHandler, which would retry the 429s away). */
async function call(
  account: GraphAccount,
): Promise<{ status: number; retryAfter: string | null; code?: unknown }> {
  const res = await fetch(`${ms.url}/v1.0/me/events`, {
    headers: { authorization: `Bearer ${account.accessToken}` },
  });
  const body = (await res.json()) as Json;
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    code: (body.error as Json | undefined)?.code,
  };
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
});

describe('per-mailbox throttling', () => {
  it('refuses a fifth concurrent request with 429 MailboxConcurrency and Retry-After', async () => {
    await ms.fault({ kind: 'latency', ms: 400, count: 4, account: dana.upn });
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => call(dana)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 429]);
    const throttled = answers.find((a) => a.status === 429)!;
    expect(throttled.code).toBe('MailboxConcurrency');
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    expect((await call(dana)).status).toBe(200);
  });

  it('refuses requests over the ten-minute budget with 429 ApplicationThrottled, per mailbox', async () => {
    await ms.expectControl(200, 'POST', '/_emulator/microsoft/limits', { perTenMinutes: 3 });
    for (let i = 0; i < 3; i++) expect((await call(dana)).status).toBe(200);
    const over = await call(dana);
    expect(over).toMatchObject({ status: 429, code: 'ApplicationThrottled' });
    expect(Number(over.retryAfter)).toBeGreaterThan(500);
    expect(Number(over.retryAfter)).toBeLessThanOrEqual(600);
    const lee = await ms.account('lee@contoso.example');
    expect((await call(lee)).status).toBe(200);
    const logged = await ms.expectControl<{ status: number }[]>(
      200,
      'GET',
      `/_emulator/requests?account=${dana.upn}`,
    );
    expect(logged.map((r) => r.status)).toEqual([200, 200, 200, 429]);
  });
});
