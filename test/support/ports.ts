import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A port nobody listens on right now, for a process a test is about to start.
 *
 * It is taken from below the kernel's ephemeral range: a port the kernel hands out for
 * `listen(0)` comes from the range outgoing connections take their local ports from, so one
 * opened between this answer and the process's bind could take it (EADDRINUSE). Below the
 * range only listeners take ports. A port this process handed out already is not handed out
 * again, and each is checked by binding it.
 */
export async function freePort(): Promise<number> {
  const [low, high] = candidateRange();
  const span = high - low + 1;
  const start = Math.floor(Math.random() * span);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + ((start + attempt * 7919) % span);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

const handedOut = new Set<number>();

/** Up to 12,000 ports just below the ephemeral range (Linux: 32768–60999, so 20768–32767). */
function candidateRange(): [number, number] {
  let ephemeralLow = 32_768;
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const parsed = Number(first);
    if (Number.isInteger(parsed) && parsed > 2_048) ephemeralLow = parsed;
  } catch {
    // Not Linux: the IANA ephemeral range starts at 49152, and 32768 is below it too.
  }
  const high = ephemeralLow - 1;
  return [Math.max(1_025, high - 12_000), high];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}
