import { fillPath, isUuidSchema, type Operation, type Parameter, withQuery } from './openapi-operations';
import { validValue } from './schema-values';

/** A valid request of one operation whose ids all name rows of one workspace. */
export interface AimedRequest {
  url: string;
  headers: Record<string, string>;
  payload?: unknown;
  /** The ids it names (path, query and body), for messages. */
  aims: string[];
}

const MAX_REQUESTS = 200;

/** The operation names one of the workspace's rows in its path: it should act on that row only. */
export const addressesRows = (operation: Operation): boolean =>
  operation.parameters.some((p) => p.in === 'path' && isUuidSchema(p.schema));

/**
 * Requests of the operation that would be valid for the workspace owning `ids`: every uuid
 * parameter (path or query) takes each of the ids in turn (all combinations, up to 200),
 * other path parameters each of their enum values, required parameters a valid value, and
 * the body a valid value of its schema whose uuids are the request's first id; when the path
 * names a row, the body's uuids name the row after it in `ids` (a merge names the record it
 * absorbs: the seed puts each mergeable record's duplicate right after it).
 */
export function requestsAimedAt(operation: Operation, ids: readonly string[]): AimedRequest[] {
  const slots = operation.parameters.flatMap((parameter): { parameter: Parameter; values: string[] }[] => {
    if (isUuidSchema(parameter.schema) && (parameter.in === 'path' || parameter.in === 'query'))
      return [{ parameter, values: [...ids] }];
    if (parameter.in === 'path') {
      const values = (parameter.schema.enum ?? []).filter((v): v is string => typeof v === 'string');
      return [
        {
          parameter,
          values:
            values.length > 0 ? values : [String(validValue(parameter.schema, { uuid: () => ids[0] ?? '' }))],
        },
      ];
    }
    if (parameter.required)
      return [{ parameter, values: [String(validValue(parameter.schema, { uuid: () => ids[0] ?? '' }))] }];
    return [];
  });
  const total = slots.reduce((n, slot) => n * slot.values.length, 1);
  const step = Math.max(1, Math.floor(total / MAX_REQUESTS));
  const requests: AimedRequest[] = [];
  for (let index = 0; index < total && requests.length < MAX_REQUESTS; index += step) {
    const path: Record<string, string> = {};
    const query: Record<string, string> = {};
    const headers: Record<string, string> = {};
    const aims: string[] = [];
    let rest = index;
    for (const { parameter, values } of slots) {
      const value = values[rest % values.length] as string;
      rest = Math.floor(rest / values.length);
      if (isUuidSchema(parameter.schema)) aims.push(value);
      if (parameter.in === 'path') path[parameter.name] = value;
      else if (parameter.in === 'query') query[parameter.name] = value;
      else if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = value;
    }
    const pathId = operation.parameters.some((p) => p.in === 'path' && isUuidSchema(p.schema))
      ? aims[0]
      : undefined;
    const bodyId =
      pathId === undefined ? (aims[0] ?? ids[0] ?? '') : (ids[(ids.indexOf(pathId) + 1) % ids.length] ?? '');
    requests.push({
      url: withQuery(fillPath(operation.path, path), query),
      headers,
      ...(operation.body === undefined
        ? {}
        : { payload: validValue(operation.body.schema, { uuid: () => bodyId }) }),
      aims,
    });
  }
  return requests;
}
