import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRequest } from '../../contract/connector';

/** A real HTTP endpoint that records what the emulator sends, as the webhook route would see it. */
export class WebhookReceiver {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly received: WebhookRequest[],
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const received: WebhookRequest[] = [];
    let base = '';
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        received.push({
          method: req.method ?? 'POST',
          url: `${base}${req.url ?? ''}`,
          headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          receivedAt: new Date(),
        });
        res.statusCode = 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return new WebhookReceiver(server, base, received);
  }

  async waitFor(predicate: (r: WebhookRequest) => boolean, timeoutMs = 5_000): Promise<WebhookRequest> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching webhook within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
