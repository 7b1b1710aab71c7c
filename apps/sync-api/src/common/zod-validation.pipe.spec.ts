import type { ArgumentMetadata } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationFailedException } from './api-errors';
import { MAX_INPUT_DEPTH, MAX_INPUT_STRING_LENGTH, ZodValidationPipe } from './zod-validation.pipe';

const body = z.object({
  name: z.string().min(1),
  role: z.enum(['admin', 'sales']),
  limits: z.object({ perMinute: z.coerce.number().int().positive() }).optional(),
});

const pipe = new ZodValidationPipe();

function rejection(run: () => unknown): ValidationFailedException {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailedException);
    return error as ValidationFailedException;
  }
  throw new Error('expected the pipe to reject the value');
}

describe('ZodValidationPipe', () => {
  it('returns the parsed value, unknown keys dropped and coercions applied', () => {
    const value = { name: 'ci', role: 'sales', limits: { perMinute: '10' }, extra: true };
    expect(pipe.transform(value, { type: 'body', schema: body })).toEqual({
      name: 'ci',
      role: 'sales',
      limits: { perMinute: 10 },
    });
  });

  it('passes through parameters that declare no schema', () => {
    const value = { anything: 1 };
    expect(pipe.transform(value, { type: 'body' })).toBe(value);
    expect(pipe.transform('raw', { type: 'custom' })).toBe('raw');
  });

  it('names every failing field in the message', () => {
    const error = rejection(() =>
      pipe.transform({ role: 'owner', limits: { perMinute: -1 } }, { type: 'body', schema: body }),
    );
    expect(error.getStatus()).toBe(400);
    expect(error.message).toMatch(/^invalid request: /);
    expect(error.message).toContain('name: ');
    expect(error.message).toContain('role: ');
    expect(error.message).toContain('limits.perMinute: ');
    expect(error.issues.map((issue) => issue.path.join('.'))).toEqual(['name', 'role', 'limits.perMinute']);
  });

  it('names a route parameter by its name and a missing body by its part', () => {
    const param: ArgumentMetadata = { type: 'param', data: 'id', schema: z.uuid() };
    expect(rejection(() => pipe.transform('nope', param)).message).toMatch(/^invalid request: id: /);
    expect(rejection(() => pipe.transform(undefined, { type: 'body', schema: body })).message).toMatch(
      /^invalid request: body: /,
    );
  });

  it('does not echo the rejected value', () => {
    const secret = 'pat-na1-very-secret-token';
    const error = rejection(() => pipe.transform({ name: 1, role: secret }, { type: 'body', schema: body }));
    expect(error.message).not.toContain(secret);
  });

  it('refuses a schema it cannot run rather than skipping validation', () => {
    const foreign: NonNullable<ArgumentMetadata['schema']> = {
      '~standard': { version: 1, vendor: 'other', validate: () => ({ value: 'x' }) },
    };
    expect(() => pipe.transform('x', { type: 'body', schema: foreign })).toThrow(TypeError);
  });

  it('refuses input nested deeper than MAX_INPUT_DEPTH without recursing into it', () => {
    const anyJson = z.object({ credentials: z.record(z.string(), z.unknown()) });
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 1 };
      for (let level = 1; level < levels; level++) value = { a: value };
      return value;
    };
    // { credentials: <levels> }: the body itself is one level more.
    expect(
      pipe.transform({ credentials: nest(MAX_INPUT_DEPTH - 1) }, { type: 'body', schema: anyJson }),
    ).toEqual({
      credentials: nest(MAX_INPUT_DEPTH - 1),
    });
    const error = rejection(() =>
      pipe.transform({ credentials: nest(MAX_INPUT_DEPTH) }, { type: 'body', schema: anyJson }),
    );
    expect(error.message).toBe(`invalid request: body: nested deeper than ${MAX_INPUT_DEPTH} levels`);
    // Far past the point where a recursive walk (JSON.stringify) overflows the stack.
    expect(() => pipe.transform({ credentials: nest(200_000) }, { type: 'body', schema: anyJson })).toThrow(
      ValidationFailedException,
    );
  });

  describe('refuses text no field may hold, wherever it is, before any schema', () => {
    const UNSTORABLE =
      'holds a character PostgreSQL cannot store (U+0000, or half of a UTF-16 surrogate pair)';
    // A schema that takes anything: the pipe alone must refuse.
    const anything = z.record(z.string(), z.unknown());
    const query: ArgumentMetadata = { type: 'query', schema: z.object({ q: z.string().optional() }) };

    it.each([
      ['a NUL', 'a\u0000b', UNSTORABLE],
      ['a lone high surrogate', 'a\ud800b', UNSTORABLE],
      ['a lone low surrogate', '\udc00', UNSTORABLE],
      ['a megabyte', 'x'.repeat(1_000_000), `longer than ${MAX_INPUT_STRING_LENGTH} characters`],
    ])('%s, in a query parameter, a nested value or a key, naming where', (_name, text, why) => {
      expect(rejection(() => pipe.transform({ q: text }, query)).message).toBe(`invalid request: q: ${why}`);
      expect(
        rejection(() =>
          pipe.transform({ credentials: { tokens: ['ok', text] } }, { type: 'body', schema: anything }),
        ).message,
      ).toBe(`invalid request: credentials.tokens.1: ${why}`);
      const key = rejection(() =>
        pipe.transform({ fields: { [text]: 1 } }, { type: 'body', schema: anything }),
      );
      expect(key.message).toBe(`invalid request: fields: a key ${why}`);
      expect(
        rejection(() => pipe.transform(text, { type: 'param', data: 'id', schema: z.string() })).message,
      ).toBe(`invalid request: id: ${why}`);
    });

    it('takes any other text: pairs of surrogates (emoji), other control characters, the longest allowed', () => {
      for (const text of ['😀 ok', 'tab\tnew\nline\u0001', '\uffff', 'x'.repeat(MAX_INPUT_STRING_LENGTH)])
        expect(pipe.transform({ q: text }, query)).toEqual({ q: text });
    });
  });
});
