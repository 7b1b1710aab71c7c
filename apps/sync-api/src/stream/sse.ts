import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Headers of an event stream; no-transform and X-Accel-Buffering keep proxies from buffering it. */
export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** How long an EventSource waits before reconnecting, sent first on every stream. */
export const SSE_RETRY_MS = 2_000;

// JSON.stringify escapes line breaks, so the data is always one `data:` line.
export const sseEvent = (id: number, event: string, data: unknown): string =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export const sseComment = (text: string): string => `: ${text}\n\n`;

/** Where one stream's frames go. */
export interface SseSink {
  send(frame: string): void;
  end(): void;
}

// A client that stops reading would make us buffer without end.
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Frames onto a raw response; a client too far behind is dropped (it reconnects and refetches). */
export function responseSink(response: ServerResponse): SseSink {
  const gone = () => response.destroyed || response.writableEnded;
  return {
    send(frame) {
      if (gone()) return;
      if (response.writableLength > MAX_BUFFERED_BYTES) {
        response.destroy();
        return;
      }
      response.write(frame);
    },
    end() {
      if (!gone()) response.end();
    },
  };
}
