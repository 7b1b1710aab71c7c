import type { CaughtMail } from './mail/mail-catcher';

/**
 * A client of an emulator's control API (`/_emulator/...`), for tests and the demo: JSON in and
 * out, a refusal thrown with its status and body. `.mail` reads the mail catch-all.
 */
export const emulatorControl = (baseUrl: string) => {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  return Object.assign(call, {
    mail: {
      /** Newest first; only those delivered to `to` when given. */
      messages: (to?: string) =>
        call<CaughtMail[]>(
          'GET',
          `/_emulator/mail/messages${to === undefined ? '' : `?to=${encodeURIComponent(to)}`}`,
        ),
      clear: () => call<void>('DELETE', '/_emulator/mail/messages'),
    },
  });
};
