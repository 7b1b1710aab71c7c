import { describe, expect, it } from 'vitest';
import { ApiError, apiErrorOf, describeError, parseRetryAfter } from './errors';

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-12-03T12:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Thu, 03 Dec 2026 12:00:10 GMT', now)).toBe(10);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});

describe('apiErrorOf', () => {
  it("maps the API's error body with its Retry-After", async () => {
    const response = new Response(JSON.stringify({ error: { code: 'rate_limited', message: 'Slow down' } }), {
      status: 429,
      headers: { 'retry-after': '3' },
    });
    const error = await apiErrorOf(response);
    expect(error).toBeInstanceOf(ApiError);
    expect([error.status, error.code, error.message, error.retryAfter]).toEqual([
      429,
      'rate_limited',
      'Slow down',
      3,
    ]);
    expect(describeError(error).message).toBe('Slow down. Try again in 3 s.');
    expect(error.details).toEqual({});
  });

  it('keeps what the body names beside code and message (the replay in the way)', async () => {
    const replayId = '0b9c2a7e-6f1d-4a53-9d1e-2f6f0d4f8a11';
    const response = new Response(
      JSON.stringify({ error: { code: 'replay_running', message: 'one at a time', replayId } }),
      { status: 409 },
    );
    const error = await apiErrorOf(response);
    expect([error.code, error.message, error.details]).toEqual([
      'replay_running',
      'one at a time',
      { replayId },
    ]);
  });

  it('leaves a message that says when to retry as it is, and words long waits in minutes', () => {
    const said = new ApiError({
      status: 429,
      code: 'rate_limited',
      message: 'retry in 3058 s',
      retryAfter: 3058,
    });
    expect(describeError(said).message).toBe('retry in 3058 s');
    const unsaid = new ApiError({
      status: 429,
      code: 'rate_limited',
      message: 'Too many links.',
      retryAfter: 3058,
    });
    expect(describeError(unsaid).message).toBe('Too many links. Try again in 51 min.');
  });

  it('names the status when the body is not an error body', async () => {
    const error = await apiErrorOf(new Response('<html>', { status: 502, statusText: 'Bad Gateway' }));
    expect([error.code, error.message]).toEqual(['http_502', 'Bad Gateway']);
  });
});
