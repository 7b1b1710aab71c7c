import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEvent } from '../webhook-dispatcher';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  method: string;
  /** The full URL the emulator called, as a receiver rebuilds it for v3 verification. */
  url: string;
  body: string;
  events: WebhookEvent[];
}

/** How the receiver answers the n-th request (from 0): a status, after an optional delay. */
export type Responder = (request: ReceivedWebhook, n: number) => { status: number; delayMs?: number };

/** A real HTTP server standing in for the app's webhook endpoint. */
export class WebhookReceiver {
  private constructor(
    readonly url: string,
    readonly received: ReceivedWebhook[],
    private readonly close_: () => Promise<void>,
  ) {}

  static async start(respond: Responder = () => ({ status: 204 })): Promise<WebhookReceiver> {
    const received: ReceivedWebhook[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const { port } = server.address() as AddressInfo;
        const request: ReceivedWebhook = {
          headers: req.headers,
          method: req.method ?? '',
          url: `http://127.0.0.1:${port}${req.url ?? ''}`,
          body,
          events: JSON.parse(body) as WebhookEvent[],
        };
        const n = received.length;
        received.push(request);
        const { status, delayMs } = respond(request, n);
        setTimeout(() => res.writeHead(status).end(), delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    return new WebhookReceiver(`http://127.0.0.1:${port}/hubspot/webhooks`, received, async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
  }

  /** Every event received so far, in arrival order. */
  get events(): WebhookEvent[] {
    return this.received.flatMap((r) => r.events);
  }

  close(): Promise<void> {
    return this.close_();
  }
}
