declare const brand: unique symbol;
/** A string that is known to be an id of one kind; ids of different kinds do not mix. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type WorkspaceId = Brand<string, 'WorkspaceId'>;
export type ConnectionId = Brand<string, 'ConnectionId'>;
export type UserId = Brand<string, 'UserId'>;
export type ApiKeyId = Brand<string, 'ApiKeyId'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);
