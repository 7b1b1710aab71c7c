import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Ids shaped like Exchange's. A message has two: its REST id, which changes whenever the
 * message moves to another folder (Outlook makes a new item there), and the immutable id that
 * `Prefer: IdType="ImmutableId"` asks for, which never does. Folder ids do not change.
 */
const REST_PREFIX = 'AAMkAD';
const IMMUTABLE_PREFIX = 'AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A';
const FOLDER_PREFIX = 'AQMkAD';
const CONVERSATION_PREFIX = 'AAQkAD';
/** 33 random bytes: 44 base64url characters after the prefix. */
const ID_BYTES = 33;
const ID_TAIL = /^[A-Za-z0-9_-]{44}$/;

const newId = (prefix: string): string => prefix + randomBytes(ID_BYTES).toString('base64url');

export const newRestId = (): string => newId(REST_PREFIX);
export const newImmutableId = (): string => newId(IMMUTABLE_PREFIX);
export const newFolderId = (): string => newId(FOLDER_PREFIX);
export const newConversationId = (): string => newId(CONVERSATION_PREFIX);

/** Which of a message's ids a client sees (`Prefer: IdType`). */
export type IdType = 'rest' | 'immutable';

/** What a string given as a message id is, or undefined when it is not one (Graph's 400 ErrorInvalidIdMalformed). */
export function messageIdType(id: string): IdType | undefined {
  if (id.startsWith(IMMUTABLE_PREFIX) && ID_TAIL.test(id.slice(IMMUTABLE_PREFIX.length))) return 'immutable';
  if (id.startsWith(REST_PREFIX) && ID_TAIL.test(id.slice(REST_PREFIX.length))) return 'rest';
  return undefined;
}

export const isFolderId = (id: string): boolean =>
  id.startsWith(FOLDER_PREFIX) && ID_TAIL.test(id.slice(FOLDER_PREFIX.length));

/** A message's change key: Exchange's item prefix and a fresh version. */
export const newMessageChangeKey = (): string => `CQAAABYAAAA${randomBytes(15).toString('base64')}`;

/**
 * PR_CONVERSATION_INDEX: a header block (a reserved byte, five bytes of the FILETIME, the
 * conversation's GUID) and five more bytes per reply. Graph writes it in base64, as Exchange does.
 */
export function rootConversationIndex(at: number): Buffer {
  const filetime = BigInt(at) * 10_000n + 116_444_736_000_000_000n;
  const head = Buffer.alloc(6);
  head[0] = 0x01;
  head.writeUIntBE(Number(filetime >> 24n), 1, 5);
  return Buffer.concat([head, Buffer.from(randomUUID().replaceAll('-', ''), 'hex')]);
}

export function replyConversationIndex(root: Buffer): Buffer {
  return Buffer.concat([root, randomBytes(5)]);
}

/** An RFC 5322 Message-ID as the sender's server would write it. */
export function newInternetMessageId(fromAddress: string): string {
  const domain = fromAddress.split('@')[1] ?? 'mail.example';
  return `<${randomBytes(12).toString('hex').toUpperCase()}@${domain}>`;
}
