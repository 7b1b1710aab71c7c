import { createHash, createHmac } from 'node:crypto';

/** v1: hex SHA-256 of `secret + body`. */
export function signatureV1(clientSecret: string, body: string): string {
  return createHash('sha256')
    .update(clientSecret + body)
    .digest('hex');
}

/** v2: hex SHA-256 of `secret + method + uri + body`. */
export function signatureV2(clientSecret: string, method: string, uri: string, body: string): string {
  return createHash('sha256')
    .update(clientSecret + method + uri + body)
    .digest('hex');
}

/**
 * v3: base64 HMAC-SHA256 keyed by the app secret over `method + uri + body + timestamp`,
 * where `uri` is the full URL HubSpot called (scheme included) and `timestamp` the
 * X-HubSpot-Request-Timestamp value in epoch milliseconds.
 */
export function signatureV3(
  clientSecret: string,
  method: string,
  uri: string,
  body: string,
  timestamp: number,
): string {
  return createHmac('sha256', clientSecret)
    .update(method + uri + body + String(timestamp))
    .digest('base64');
}

/** The headers HubSpot puts on a webhook request. */
export function webhookHeaders(
  clientSecret: string,
  uri: string,
  body: string,
  timestamp: number,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent':
      'HubSpot Connect 2.0 (http://dev.hubspot.com/) (namespace: webhooks-nio-http-client) - emulator',
    'X-HubSpot-Signature': signatureV1(clientSecret, body),
    'X-HubSpot-Signature-Version': 'v1',
    'X-HubSpot-Signature-v3': signatureV3(clientSecret, 'POST', uri, body, timestamp),
    'X-HubSpot-Request-Timestamp': String(timestamp),
  };
}
