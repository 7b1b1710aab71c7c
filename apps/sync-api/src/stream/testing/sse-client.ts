/** One event as a client sees it, with when it arrived (performance.now()). */
export interface ReceivedEvent {
  id: string | undefined;
  event: string;
  data: string;
  receivedAt: number;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  /** Every event so far, in order. */
  events: ReceivedEvent[];
  /** Every comment line so far (`: heartbeat` → `heartbeat`). */
  comments: string[];
  /**
   * The first event from index `from` on (already received or still to come) that matches,
   * or a rejection after `timeoutMs`.
   */
  next(match: (event: ReceivedEvent) => boolean, timeoutMs?: number, from?: number): Promise<ReceivedEvent>;
  /** Resolves once a comment equal to `text` has arrived. */
  comment(text: string, timeoutMs?: number): Promise<void>;
  /** Disconnects (aborts the request). */
  close(): void;
}

export interface RefusedStream {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * A minimal EventSource over fetch (which, unlike EventSource, can send the Authorization
 * header): opens `url`, and either hands back the refusal or reads frames as they arrive.
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
): Promise<{ opened: OpenedStream } | { refused: RefusedStream }> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: abort.signal,
  });
  if (!res.ok || !res.body) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { refused: { status: res.status, headers: res.headers, body } };
  }
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const wake = new Set<() => void>();
  const changed = () => {
    for (const fn of [...wake]) fn();
  };

  const parseFrame = (frame: string) => {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    let hasField = false;
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) {
        comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else continue;
      hasField = true;
    }
    if (hasField && data.length > 0)
      events.push({ id, event, data: data.join('\n'), receivedAt: performance.now() });
  };

  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        changed();
      }
    } catch {
      // aborted, or the server went away
    }
  })();

  const until = <T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = probe();
        if (found === undefined) return;
        clearTimeout(timer);
        wake.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        wake.delete(check);
        reject(new Error(`no ${what} within ${timeoutMs} ms; events so far: ${JSON.stringify(events)}`));
      }, timeoutMs);
      wake.add(check);
      check();
    });

  return {
    opened: {
      status: res.status,
      headers: res.headers,
      events,
      comments,
      next: (match, timeoutMs = 5_000, from = 0) =>
        until(() => events.slice(from).find(match), timeoutMs, 'matching event'),
      comment: (text, timeoutMs = 5_000) =>
        until(() => (comments.includes(text) ? true : undefined), timeoutMs, `comment "${text}"`).then(
          () => undefined,
        ),
      close: () => abort.abort(),
    },
  };
}
