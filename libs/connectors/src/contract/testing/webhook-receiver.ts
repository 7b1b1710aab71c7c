import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRequest } from '../connector';

/**
 * A real HTTP endpoint standing in for the webhook route: records each request as the
 * HTTP layer would hand it to `verifyWebhook` (raw body, full URL), and answers 204.
 */
export class WebhookReceiver {
  readonly received: WebhookRequest[] = [];
  private constructor(
    readonly url: string,
    private readonly stop: () => Promise<void>,
  ) {}

  static async start(path = '/webhooks'): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { port } = server.address() as AddressInfo;
        const headers: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(',') : v;
        receiver?.received.push({
          method: req.method ?? 'POST',
          url: `http://127.0.0.1:${port}${req.url ?? ''}`,
          headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          receivedAt: new Date(),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(`http://127.0.0.1:${port}${path}`, async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    return receiver;
  }

  /** Waits for the first request matching `match` (polling), or throws after `timeoutMs`. */
  async waitFor(match: (r: WebhookRequest) => boolean, timeoutMs = 10_000): Promise<WebhookRequest> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no matching webhook within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): Promise<void> {
    return this.stop();
  }
}
