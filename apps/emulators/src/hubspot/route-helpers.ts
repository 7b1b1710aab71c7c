import { validationError } from './errors';
import { type ObjectTypeDef, resolveObjectType } from './object-types';

/** The object type of a path segment; HubSpot answers an unknown one with a 400. */
export function objectTypeOf(segment: string): ObjectTypeDef {
  const def = resolveObjectType(segment);
  if (!def) throw validationError(`Unable to infer object type from: ${segment}`);
  return def;
}

/**
 * A `properties` map from a request body. HubSpot's values are strings; numbers and
 * booleans are taken as their text, `null` clears the property (as an empty string does).
 */
export function propertiesOf(raw: unknown, field = 'properties'): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw validationError(`Invalid input JSON: ${field} must be an object.`);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (value === null) out[name] = '';
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[name] = String(value);
    else
      throw validationError(`Property values were not valid: "${name}" must be a string.`, {
        propertyName: [name],
      });
  }
  return out;
}

export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError('Invalid input JSON: expected an object.');
  }
  return body as Record<string, unknown>;
}

/** A batch's `inputs`, at most 100 of them. */
export function batchInputs(body: unknown, max = 100): Record<string, unknown>[] {
  const inputs = bodyObject(body).inputs;
  if (!Array.isArray(inputs)) throw validationError('Invalid input JSON: inputs must be an array.');
  if (inputs.length > max) {
    throw validationError(`Batch input cannot exceed ${max} inputs; received ${inputs.length}.`, {
      inputs: [String(inputs.length)],
    });
  }
  return inputs.map((i) => (i && typeof i === 'object' ? (i as Record<string, unknown>) : {}));
}

export function queryFlag(value: unknown): boolean {
  return value === true || value === 'true';
}

/** A positive integer query parameter; a malformed one is a 400 as in HubSpot. */
export function intParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw validationError(`Invalid value for ${name}: ${String(value)}.`);
  return n;
}
