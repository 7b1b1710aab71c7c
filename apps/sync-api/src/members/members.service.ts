import { HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { AuditLogService } from '../admin/audit-log.service';
import { ActorLabels } from '../auth/actor-labels';
import { actorRef } from '../auth/actor-ref';
import { type LinkRecipient, MagicLinksService } from '../auth/magic-links/magic-links.service';
import type { Principal, Role } from '../auth/principal';
import type { MemberId } from '../auth/sessions/sessions.repository';
import { SessionsService } from '../auth/sessions/sessions.service';
import { CodedHttpException } from '../common/api-errors';
import { type MemberRecord, MembersRepository } from './members.repository';
import type { InviteMemberBody, MemberListView, MemberView } from './members.schemas';

export interface SessionProfile {
  member: { id: string; email: string; name: string | null };
  workspace: { id: string; name: string };
  role: Role;
}

/** The people of a workspace: who may sign in, with which role. */
@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(MagicLinksService) private readonly links: MagicLinksService,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @InjectPinoLogger(MembersService.name) private readonly logger: PinoLogger,
  ) {}

  /**
   * Who signs in with this address (already proven theirs, by a provider or a mailed link):
   * a member, or a pending invitation, which this accepts. With memberships in several
   * workspaces, the one signed into last, else the oldest. Null: the address may not sign in.
   */
  async signInCandidate(email: string): Promise<{ workspaceId: string; memberId: string } | null> {
    const candidate = await this.members.findSignInCandidate(email);
    if (!candidate) return null;
    if (candidate.status === 'invited') await this.members.accept(candidate.workspaceId, candidate.memberId);
    return { workspaceId: candidate.workspaceId, memberId: candidate.memberId };
  }

  /**
   * To whom a sign-in link for this address goes (nothing is accepted until the link is
   * used): as `signInCandidate` picks, or in the given workspace.
   */
  async linkRecipient(email: string, workspaceId?: string): Promise<LinkRecipient | null> {
    if (workspaceId !== undefined) {
      const member = await this.members.findByEmail(workspaceId as WorkspaceId, email);
      return member && { workspaceId: member.workspaceId, memberId: member.id, email: member.email };
    }
    const candidate = await this.members.findSignInCandidate(email);
    return (
      candidate && {
        workspaceId: candidate.workspaceId,
        memberId: candidate.memberId,
        email: candidate.email,
      }
    );
  }

  /** What GET /auth/session shows of the signed-in member. */
  async profile(workspaceId: WorkspaceId, memberId: string): Promise<SessionProfile | null> {
    const found = await this.members.findWithWorkspace(workspaceId, memberId as MemberId);
    if (!found) return null;
    return {
      member: { id: found.member.id, email: found.member.email, name: found.member.name },
      workspace: { id: workspaceId, name: found.workspaceName },
      role: found.member.role,
    };
  }

  async list(principal: Principal): Promise<MemberListView> {
    return { data: (await this.members.list(principal.workspaceId)).map(toView) };
  }

  /** An invitation (a removed member is invited again), mailed with a sign-in link. */
  async invite(principal: Principal, body: InviteMemberBody): Promise<MemberView> {
    const invited = await this.members.invite(
      principal.workspaceId,
      { email: body.email, name: body.name ?? null, role: body.role },
      (tx, member) =>
        this.audit.record(
          principal,
          'member.invited',
          member.id,
          { email: member.email, role: member.role },
          tx,
        ),
    );
    if (!invited.ok) {
      throw new CodedHttpException(HttpStatus.CONFLICT, 'member_exists', `${body.email} is a member already`);
    }
    const member = invited.value;
    this.logger.info({ invitedMemberId: member.id, role: member.role }, 'member invited');
    const [inviter, workspaceName] = await Promise.all([
      this.labels.resolve(principal.workspaceId, { actors: [actorRef(principal.actor)] }),
      this.members.workspaceName(principal.workspaceId),
    ]);
    await this.links.mailInvitation(
      { workspaceId: member.workspaceId, memberId: member.id, email: member.email },
      principal.actor.kind === 'member' ? inviter.actor(actorRef(principal.actor)).label : null,
      workspaceName ?? 'a workspace',
    );
    return toView(member);
  }

  /** Takes effect on the member's next request: sessions read the role afresh each time. */
  async changeRole(principal: Principal, id: string, role: Role): Promise<MemberView> {
    const changed = await this.members.changeOrRemove(
      principal.workspaceId,
      id as MemberId,
      { role },
      (tx, before) =>
        this.audit.record(principal, 'member.role_changed', id, { from: before.role, to: role }, tx),
    );
    if (!changed.ok) throw this.refusal(changed.error, id);
    this.logger.info({ changedMemberId: id, role }, 'member role changed');
    return toView(changed.value);
  }

  /** Removed at once: their sessions are refused from the next request, and revoked. */
  async remove(principal: Principal, id: string): Promise<void> {
    const removed = await this.members.changeOrRemove(
      principal.workspaceId,
      id as MemberId,
      { removedAt: new Date() },
      (tx, before) => this.audit.record(principal, 'member.removed', id, { email: before.email }, tx),
    );
    if (!removed.ok) throw this.refusal(removed.error, id);
    const ended = await this.sessions.endAllOf(principal.workspaceId, id);
    this.logger.info({ removedMemberId: id, endedSessions: ended }, 'member removed');
  }

  private refusal(code: 'not_found' | 'last_admin', id: string): Error {
    return code === 'not_found'
      ? new NotFoundException(`no member ${id}`)
      : new CodedHttpException(
          HttpStatus.CONFLICT,
          'last_admin',
          'the workspace would be left without an active admin: make another member admin first',
        );
  }
}

function toView(member: MemberRecord): MemberView {
  return {
    id: member.id,
    email: member.email,
    name: member.name,
    role: member.role,
    status: member.status,
    createdAt: member.createdAt.toISOString(),
    lastSignInAt: member.lastSignInAt?.toISOString() ?? null,
  };
}
