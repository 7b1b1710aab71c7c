/**
 * A client of an emulator's control API (`/_emulator/...`), for tests and the demo: JSON in and
 * out, a refusal thrown with its status and body.
 */
export const emulatorControl =
  (baseUrl: string) =>
  async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
