import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphError, graphErrors } from './graph-errors';

/** Graph's query options and function parameters are matched without case (`$skipToken`, `startdatetime`). */
export function queryParam(req: FastifyRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (key.toLowerCase() !== wanted) continue;
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === 'string' ? first : undefined;
  }
  return undefined;
}

/** A whole-number query option within bounds, or Graph's 400. */
export function intParam(req: FastifyRequest, name: string, def: number, max: number): number {
  const raw = queryParam(req, name);
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > max)
    throw graphErrors.badRequest(
      `Invalid value '${raw}' for query option ${name}: a whole number up to ${max} is expected.`,
    );
  return n;
}

/** `$select=a,b`: the names asked for, or undefined for everything. */
export function selectParam(req: FastifyRequest): string[] | undefined {
  const raw = queryParam(req, '$select');
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((s) => s.trim());
}

/** The preferences of a `Prefer` header (several headers, or one with commas), by lower-cased name. */
export function preferences(req: FastifyRequest): Map<string, string> {
  const header = req.headers.prefer;
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const out = new Map<string, string>();
  // Split on commas outside quotes: a time zone name never has one, but a quoted value could.
  for (const part of text.match(/(?:[^,"]|"[^"]*")+/g) ?? []) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value =
      eq < 0
        ? ''
        : part
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
    if (name !== '') out.set(name, value);
  }
  return out;
}

/** The preferences a response honoured, in `Preference-Applied` (Graph's spelling of each). */
export class AppliedPreferences {
  private readonly applied: string[] = [];

  add(preference: string): void {
    this.applied.push(preference);
  }

  send(reply: FastifyReply): void {
    if (this.applied.length > 0) void reply.header('Preference-Applied', this.applied.join(', '));
  }
}

/** An instant in a query parameter; without an offset it is UTC, as calendarView reads it. */
export function instantParam(name: string, value: string): number {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(value);
  const ms = m
    ? Date.parse(m[3] ? value.replace(/(\.\d{3})\d+/, '$1') : `${value.replace(/(\.\d{3})\d+/, '$1')}Z`)
    : NaN;
  if (Number.isNaN(ms))
    throw new GraphError(
      400,
      'ErrorInvalidParameter',
      `The value '${value}' of parameter '${name}' is invalid.`,
    );
  return ms;
}
