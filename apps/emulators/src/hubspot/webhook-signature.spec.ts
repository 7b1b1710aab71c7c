import { Signature } from '@hubspot/api-client';
import { describe, expect, it } from 'vitest';
import { signatureV1, signatureV2, signatureV3, webhookHeaders } from './webhook-signature';

const secret = 'app-secret';
const uri = 'https://receiver.example.test/hubspot/webhooks?tenant=a';
const body = JSON.stringify([{ eventId: 1, subscriptionType: 'contact.creation', objectId: 123 }]);

describe('webhook signatures', () => {
  it("agree with the official SDK's Signature helper for v1, v2 and v3", () => {
    const timestamp = Date.now();
    expect(
      Signature.isValid({
        signatureVersion: 'v1',
        signature: signatureV1(secret, body),
        clientSecret: secret,
        requestBody: body,
      }),
    ).toBe(true);
    expect(
      Signature.isValid({
        signatureVersion: 'v2',
        signature: signatureV2(secret, 'POST', uri, body),
        clientSecret: secret,
        requestBody: body,
        url: uri,
        method: 'POST',
      }),
    ).toBe(true);
    expect(
      Signature.isValid({
        signatureVersion: 'v3',
        signature: signatureV3(secret, 'POST', uri, body, timestamp),
        clientSecret: secret,
        requestBody: body,
        url: uri,
        method: 'POST',
        timestamp,
      }),
    ).toBe(true);
    expect(
      Signature.isValid({
        signatureVersion: 'v1',
        signature: signatureV1('other', body),
        clientSecret: secret,
        requestBody: body,
      }),
    ).toBe(false);
  });

  it('puts v1 and v3 on a webhook request, as HubSpot does', () => {
    const headers = webhookHeaders(secret, uri, body, 1_700_000_000_000);
    expect(headers).toMatchObject({
      'X-HubSpot-Signature': signatureV1(secret, body),
      'X-HubSpot-Signature-Version': 'v1',
      'X-HubSpot-Signature-v3': signatureV3(secret, 'POST', uri, body, 1_700_000_000_000),
      'X-HubSpot-Request-Timestamp': '1700000000000',
    });
  });
});
