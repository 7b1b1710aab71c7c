import {
  type BeforeApplicationShutdown,
  HttpStatus,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { EntityType } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { actorRef } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { type EntityChange, EntityChangeListener } from './entity-change.listener';
import { type SseSink, sseComment, sseEvent } from './sse';
import { type RecordChangedData, type RefetchReason, STREAM_EVENTS } from './stream.schemas';

/** Per actor: an API key, or a signed-in member (all their tabs together). */
export const MAX_STREAMS_PER_KEY = 5;
export const HEARTBEAT_MS = 15_000;

interface OpenStream {
  readonly workspaceId: string;
  /** `actorRef` of the key or member that opened it. */
  readonly actor: string;
  /** Undefined: every type. */
  readonly types: ReadonlySet<EntityType> | undefined;
  readonly sink: SseSink;
}

/** An open stream, as its connection sees it. */
export interface StreamHandle {
  /** Tells this stream's client to read again. */
  refetch(reason: RefetchReason): void;
  /** Forgets the stream; safe to call more than once. */
  close(): void;
}

/**
 * The open streams of this process, by workspace: each change announced by the sync stage
 * goes to the streams of its own workspace only. Event ids are one sequence per process.
 */
@Injectable()
export class StreamService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly byWorkspace = new Map<string, Set<OpenStream>>();
  private readonly perKey = new Map<string, number>();
  private sequence = 0;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    @Inject(EntityChangeListener) listener: EntityChangeListener,
    @InjectPinoLogger(StreamService.name) private readonly logger: PinoLogger,
  ) {
    listener.subscribe({
      change: (change) => this.publish(change),
      listening: () => this.refetchAll('listener_reconnected'),
    });
  }

  onApplicationBootstrap(): void {
    // One timer for every stream rather than one per connection.
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Ends every stream (their clients reconnect to another process), so the server can close. */
  beforeApplicationShutdown(): void {
    clearInterval(this.heartbeat);
    for (const streams of this.byWorkspace.values()) for (const stream of streams) stream.sink.end();
  }

  /** Registers a stream for the caller's workspace; 429 when the key has its share open already. */
  open(principal: Principal, types: readonly EntityType[] | undefined, sink: SseSink): StreamHandle {
    const { workspaceId } = principal;
    const actor = actorRef(principal.actor);
    const openForKey = this.perKey.get(actor) ?? 0;
    if (openForKey >= MAX_STREAMS_PER_KEY)
      throw new CodedHttpException(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limited',
        `at most ${MAX_STREAMS_PER_KEY} open streams per API key or member: close one first`,
      );
    const stream: OpenStream = { workspaceId, actor, types: types && new Set(types), sink };
    this.perKey.set(actor, openForKey + 1);
    const streams = this.byWorkspace.get(workspaceId) ?? new Set<OpenStream>();
    streams.add(stream);
    this.byWorkspace.set(workspaceId, streams);
    this.logger.debug({ workspaceId, actor, types }, 'stream opened');
    let closed = false;
    return {
      refetch: (reason) => sink.send(this.nextEvent(STREAM_EVENTS.refetch, { reason })),
      close: () => {
        if (closed) return;
        closed = true;
        this.remove(stream);
      },
    };
  }

  /** Open streams of this process, all or of one workspace or key. */
  openStreams(of: { workspaceId?: string; actor?: string } = {}): number {
    const counted = (stream: OpenStream) =>
      (of.workspaceId === undefined || stream.workspaceId === of.workspaceId) &&
      (of.actor === undefined || stream.actor === of.actor);
    let count = 0;
    for (const streams of this.byWorkspace.values())
      for (const stream of streams) if (counted(stream)) count++;
    return count;
  }

  /** A comment on every stream: keeps proxies from timing it out and lets clients see it alive. */
  beat(): void {
    const frame = sseComment('heartbeat');
    for (const streams of this.byWorkspace.values()) for (const stream of streams) stream.sink.send(frame);
  }

  private publish(change: EntityChange): void {
    const streams = this.byWorkspace.get(change.workspaceId);
    if (!streams) return;
    const data: RecordChangedData = { id: change.id, type: change.type, version: change.version };
    const frame = this.nextEvent(STREAM_EVENTS.changed, data);
    for (const stream of streams)
      if (stream.types === undefined || stream.types.has(change.type)) stream.sink.send(frame);
  }

  private refetchAll(reason: RefetchReason): void {
    if (this.byWorkspace.size === 0) return;
    const frame = this.nextEvent(STREAM_EVENTS.refetch, { reason });
    for (const streams of this.byWorkspace.values()) for (const stream of streams) stream.sink.send(frame);
  }

  private nextEvent(event: string, data: unknown): string {
    this.sequence++;
    return sseEvent(this.sequence, event, data);
  }

  private remove(stream: OpenStream): void {
    const streams = this.byWorkspace.get(stream.workspaceId);
    streams?.delete(stream);
    if (streams?.size === 0) this.byWorkspace.delete(stream.workspaceId);
    const left = (this.perKey.get(stream.actor) ?? 1) - 1;
    if (left > 0) this.perKey.set(stream.actor, left);
    else this.perKey.delete(stream.actor);
    this.logger.debug({ workspaceId: stream.workspaceId, actor: stream.actor }, 'stream closed');
  }
}
