import { Inject, Injectable, Module } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import { parseActorRef } from './actor-ref';
import type { ActorKind } from './principal';

/** How a source reads to a person: who (a member, a key) or which account (a connection). */
export interface SourceLabel {
  label: string | null;
  actorKind: ActorKind | null;
}

const PROVIDER_NAMES: Record<string, string> = {
  hubspot: 'HubSpot',
  google_calendar: 'Google',
  gmail: 'Google',
  google_tasks: 'Google',
  microsoft_calendar: 'Outlook Calendar',
  microsoft_mail: 'Outlook Mail',
  microsoft_todo: 'Microsoft To Do',
  syncline: 'Syncline',
};

/**
 * The labels of actors and connections, resolved in bulk: one query per kind for a whole
 * view, never one per field. A member reads as their name (else email), a key as its name,
 * a connection as the name it was given ("CRM A"), else its provider and account ("HubSpot
 * 12345678", "Google ana@acme.com").
 * Removed members and revoked keys keep their labels: history still names them.
 */
@Injectable()
export class ActorLabels {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  async resolve(
    workspaceId: WorkspaceId,
    wanted: { actors?: Iterable<string>; connections?: Iterable<string> },
  ): Promise<Labels> {
    const memberIds = new Set<string>();
    const keyIds = new Set<string>();
    for (const ref of wanted.actors ?? []) {
      const actor = parseActorRef(ref);
      if (actor?.kind === 'member') memberIds.add(actor.id);
      else if (actor?.kind === 'apiKey') keyIds.add(actor.id);
    }
    const connectionIds = new Set([...(wanted.connections ?? [])].filter(isUuid));
    const [members, keys, connections] = await Promise.all([
      memberIds.size === 0
        ? []
        : this.prisma.member.findMany({
            where: { workspaceId, id: { in: [...memberIds] } },
            select: { id: true, name: true, email: true },
          }),
      keyIds.size === 0
        ? []
        : this.prisma.apiKey.findMany({
            where: { workspaceId, id: { in: [...keyIds] } },
            select: { id: true, name: true },
          }),
      connectionIds.size === 0
        ? []
        : this.prisma.connection.findMany({
            where: { workspaceId, id: { in: [...connectionIds] } },
            select: { id: true, provider: true, externalAccountId: true, displayName: true },
          }),
    ]);
    return new Labels(
      new Map(members.map((m) => [m.id, m.name ?? m.email])),
      new Map(keys.map((k) => [k.id, k.name])),
      new Map(
        connections.map((c) => [
          c.id,
          c.displayName ?? `${PROVIDER_NAMES[c.provider] ?? c.provider} ${c.externalAccountId}`,
        ]),
      ),
    );
  }
}

export class Labels {
  constructor(
    private readonly members: ReadonlyMap<string, string>,
    private readonly keys: ReadonlyMap<string, string>,
    private readonly connections: ReadonlyMap<string, string>,
  ) {}

  /** An actor reference (`member:<id>`, a key's id); null label when unknown. */
  actor(ref: string | null | undefined): SourceLabel {
    const actor = parseActorRef(ref);
    if (!actor) return { label: null, actorKind: null };
    const label = (actor.kind === 'member' ? this.members : this.keys).get(actor.id) ?? null;
    return { label, actorKind: actor.kind };
  }

  connection(id: string): SourceLabel {
    return { label: this.connections.get(id) ?? null, actorKind: null };
  }

  /** A provenance source: `user` (an actor reference) or `connection`. */
  source(source: { kind: string; id: string }): SourceLabel {
    return source.kind === 'connection' ? this.connection(source.id) : this.actor(source.id);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: string): boolean => UUID.test(value);

@Module({ providers: [ActorLabels], exports: [ActorLabels] })
export class ActorLabelsModule {}
