import type { WebhookRequest } from '../contract/connector';

/** A request header by name, whatever case the HTTP layer kept. */
export function header(request: WebhookRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(request.headers)) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}
