import type { ObjectTypeDef } from './object-types';
import type { StoreError } from './record-store';

/** HubSpot's error body. `correlationId` and `status` are added when it is sent. */
export interface HubspotErrorBody {
  status?: string;
  message: string;
  category: string;
  subCategory?: string;
  context?: Record<string, string[]>;
  errors?: {
    message: string;
    in?: string;
    code?: string;
    subCategory?: string;
    context?: Record<string, string[]>;
  }[];
  links?: Record<string, string>;
  /** Rate-limit answers only. */
  errorType?: string;
  policyName?: string;
  groupName?: string;
}

/**
 * An answer other than success, thrown from a route or hook and rendered by the app's
 * error handler as JSON with HubSpot's shape (the SDK only parses JSON error bodies).
 */
export class HubspotHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: HubspotErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

export const validationError = (message: string, context?: Record<string, string[]>): HubspotHttpError =>
  new HubspotHttpError(400, { message, category: 'VALIDATION_ERROR', ...(context ? { context } : {}) });

export const notFoundError = (
  message = 'resource not found',
  context?: Record<string, string[]>,
): HubspotHttpError =>
  new HubspotHttpError(404, { message, category: 'OBJECT_NOT_FOUND', ...(context ? { context } : {}) });

export const invalidAuthentication = (): HubspotHttpError =>
  new HubspotHttpError(401, {
    message:
      'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
    category: 'INVALID_AUTHENTICATION',
  });

export const expiredAuthentication = (expiredForMs: number): HubspotHttpError => {
  const minutes = Math.max(0, Math.floor(expiredForMs / 60_000));
  return new HubspotHttpError(401, {
    message: `The OAuth token used to make this call expired ${minutes} minute(s) ago.`,
    category: 'EXPIRED_AUTHENTICATION',
  });
};

const RATE_LIMIT_MESSAGES = {
  TEN_SECONDLY_ROLLING: 'You have reached your ten_secondly_rolling limit.',
  SECONDLY: 'You have reached your secondly limit.',
  DAILY: 'You have reached your daily limit.',
} as const;

/**
 * A 429. The SDK's retry decorator keys on `policyName` TEN_SECONDLY_ROLLING and on the
 * SECONDLY message text, so both must be exactly these.
 */
export const rateLimitError = (
  policy: keyof typeof RATE_LIMIT_MESSAGES,
  group: string,
  headers: Record<string, string>,
): HubspotHttpError =>
  new HubspotHttpError(
    429,
    {
      message: RATE_LIMIT_MESSAGES[policy],
      errorType: 'RATE_LIMIT',
      category: 'RATE_LIMITS',
      policyName: policy,
      groupName: group,
    },
    headers,
  );

export const internalError = (): HubspotHttpError =>
  new HubspotHttpError(500, { message: 'internal error', category: 'INTERNAL_ERROR' });

/** A batch input's failure (`StandardError`, every field required by the schema). */
export function standardError(category: string, message: string, context: Record<string, string[]> = {}) {
  return { status: 'error', category, message, context, errors: [], links: {} };
}

export function describeStoreError(
  type: ObjectTypeDef,
  e: StoreError,
): { status: number; category: string; message: string; context: Record<string, string[]> } {
  switch (e.code) {
    case 'NOT_FOUND':
      return {
        status: 404,
        category: 'OBJECT_NOT_FOUND',
        message: 'resource not found',
        context: { id: [e.id] },
      };
    case 'CONFLICT':
      return {
        status: 409,
        category: 'CONFLICT',
        message:
          type.name === 'contacts' && e.property === 'email'
            ? `Contact already exists. Existing ID: ${e.existingId}`
            : `A ${type.singular} with the unique value "${e.value}" for property "${e.property}" already exists. Existing ID: ${e.existingId}`,
        context: { property: [e.property], existingId: [e.existingId] },
      };
    case 'INVALID':
      return { status: 400, category: 'VALIDATION_ERROR', message: e.message, context: {} };
  }
}

export function storeErrorToHttp(type: ObjectTypeDef, e: StoreError): HubspotHttpError {
  const { status, category, message, context } = describeStoreError(type, e);
  return new HubspotHttpError(status, { message, category, context });
}
