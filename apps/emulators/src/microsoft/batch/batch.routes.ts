import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BATCH_ROUTE } from '../graph-auth';
import { GraphError, graphErrors } from '../graph-errors';

const MAX_REQUESTS = 20;
/** Outlook runs at most 4 requests of one batch at a time for a mailbox. */
const PARALLEL = 4;
/** The response headers a batch keeps of each part. */
const KEPT_HEADERS = ['content-type', 'retry-after', 'location', 'etag', 'preference-applied'];

const partSchema = z.object({
  id: z.string().min(1),
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(['GET', 'POST', 'PATCH', 'PUT', 'DELETE'])),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
  dependsOn: z.array(z.string()).optional(),
});
type BatchPart = z.output<typeof partSchema>;

export interface BatchResponse {
  id: string;
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * `POST /v1.0/$batch`: up to 20 requests run through the emulator's own routes with the
 * caller's token, 4 at a time, `dependsOn` respected (a part whose dependency failed gets
 * 424). The batch answers 200 whatever its parts answered, a 429 included.
 */
export function registerBatchRoutes(graph: FastifyInstance, root: FastifyInstance): void {
  graph.post(BATCH_ROUTE, async (req) => {
    const parts = parseBatch(req.body);
    const responses = await runBatch(parts, (part) => execute(root, req, part));
    return { responses };
  });
}

function parseBatch(body: unknown): BatchPart[] {
  const requests = (body as { requests?: unknown } | undefined)?.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    throw graphErrors.badRequest('Invalid batch payload format: requests is required.');
  if (requests.length > MAX_REQUESTS)
    throw graphErrors.badRequest(`Number of batch requests exceeds limit of ${MAX_REQUESTS}.`);
  const parsed = z.array(partSchema).safeParse(requests);
  if (!parsed.success) throw graphErrors.badRequest('Invalid batch payload format.');
  const parts = parsed.data;
  const ids = new Set(parts.map((p) => p.id));
  if (ids.size !== parts.length) throw graphErrors.badRequest('Batch request ids must be unique.');
  for (const part of parts) {
    if (/^https?:|\$batch/i.test(part.url))
      throw graphErrors.badRequest(`The url '${part.url}' must be relative to /v1.0 and not a batch.`);
    for (const dependency of part.dependsOn ?? [])
      if (!ids.has(dependency))
        throw graphErrors.badRequest(`dependsOn names an unknown request '${dependency}'.`);
  }
  if (hasCycle(parts)) throw graphErrors.badRequest('The dependsOn of the batch requests form a cycle.');
  return parts;
}

function hasCycle(parts: BatchPart[]): boolean {
  const deps = new Map(parts.map((p) => [p.id, p.dependsOn ?? []]));
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string): boolean => {
    if (state.get(id) === 'done') return false;
    if (state.get(id) === 'visiting') return true;
    state.set(id, 'visiting');
    const cyclic = (deps.get(id) ?? []).some(visit);
    state.set(id, 'done');
    return cyclic;
  };
  return parts.some((p) => visit(p.id));
}

/** Runs the parts as their dependencies allow, `PARALLEL` at most at once. */
function runBatch(
  parts: BatchPart[],
  execute: (part: BatchPart) => Promise<BatchResponse>,
): Promise<BatchResponse[]> {
  const results = new Map<string, BatchResponse>();
  const started = new Set<string>();
  let running = 0;
  return new Promise((resolve) => {
    const pump = () => {
      let progress = true;
      while (progress) {
        progress = false;
        for (const part of parts) {
          const deps = part.dependsOn ?? [];
          if (started.has(part.id) || running >= PARALLEL || !deps.every((d) => results.has(d))) continue;
          started.add(part.id);
          progress = true;
          if (deps.some((d) => results.get(d)!.status >= 400)) {
            results.set(part.id, failedDependency(part.id));
            continue;
          }
          running++;
          void execute(part).then((response) => {
            results.set(part.id, response);
            running--;
            pump();
          });
        }
      }
      if (results.size === parts.length) resolve(parts.map((p) => results.get(p.id)!));
    };
    pump();
  });
}

async function execute(root: FastifyInstance, req: FastifyRequest, part: BatchPart): Promise<BatchResponse> {
  const headers: Record<string, string> = { ...part.headers };
  if (req.headers.authorization) headers.authorization = req.headers.authorization;
  if (req.headers.host) headers.host = req.headers.host;
  if (part.body !== undefined) headers['content-type'] ??= 'application/json';
  try {
    const res = await root.inject({
      method: part.method as 'GET',
      url: `/v1.0${part.url.startsWith('/') ? '' : '/'}${part.url}`,
      headers,
      ...(part.body === undefined ? {} : { payload: JSON.stringify(part.body) }),
    });
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.headers[name];
      if (value !== undefined) kept[name] = String(value);
    }
    const json = kept['content-type']?.includes('json') && res.body !== '';
    return { id: part.id, status: res.statusCode, headers: kept, ...(json ? { body: res.json() } : {}) };
  } catch {
    const error = new GraphError(500, 'generalException', 'An unexpected error occurred.');
    return { id: part.id, status: 500, headers: { 'content-type': 'application/json' }, body: error.body() };
  }
}

function failedDependency(id: string): BatchResponse {
  const error = new GraphError(424, 'FailedDependency', 'The request depends on a request that failed.');
  return { id, status: 424, headers: { 'content-type': 'application/json' }, body: error.body() };
}
