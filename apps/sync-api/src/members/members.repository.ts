import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Role } from '../auth/principal';
import type { MemberId } from '../auth/sessions/sessions.repository';

export type MemberStatus = 'active' | 'invited';

/** The client a write goes through: a transaction the caller's audit entry joins. */
export type Db = Prisma.TransactionClient;

export interface MemberRecord {
  id: MemberId;
  workspaceId: WorkspaceId;
  email: string;
  name: string | null;
  role: Role;
  status: MemberStatus;
  createdAt: Date;
  lastSignInAt: Date | null;
}

export interface SignInCandidate {
  workspaceId: WorkspaceId;
  memberId: MemberId;
  email: string;
  status: MemberStatus;
}

const RECORD = {
  id: true,
  workspaceId: true,
  email: true,
  name: true,
  role: true,
  status: true,
  createdAt: true,
  lastSignInAt: true,
} as const satisfies Prisma.MemberSelect;

/** Emails are compared and kept lowercased (the table refuses any other). */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

@Injectable()
export class MembersRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * Unscoped on purpose: an address signing in names no workspace. Of its memberships (not
   * removed): an active one before an invitation, then the one signed into last, then the oldest.
   */
  async findSignInCandidate(email: string): Promise<SignInCandidate | null> {
    const rows = await this.prisma.$queryRaw<
      { workspaceId: string; memberId: string; email: string; status: MemberStatus }[]
    >`
      SELECT workspace_id::text AS "workspaceId", id::text AS "memberId", email, status::text AS status
        FROM member
       WHERE email = ${normalizeEmail(email)} AND removed_at IS NULL
       ORDER BY status = 'active' DESC, last_sign_in_at DESC NULLS LAST, created_at ASC, id ASC
       LIMIT 1`;
    const row = rows[0];
    return row
      ? {
          workspaceId: row.workspaceId as WorkspaceId,
          memberId: row.memberId as MemberId,
          email: row.email,
          status: row.status,
        }
      : null;
  }

  /** The member of this workspace with this address, not removed. */
  async findByEmail(workspaceId: WorkspaceId, email: string): Promise<MemberRecord | null> {
    const row = await this.prisma.member.findFirst({
      where: { workspaceId, email: normalizeEmail(email), removedAt: null },
      select: RECORD,
    });
    return row ? toRecord(row) : null;
  }

  /** An invitation becomes a membership. */
  async accept(workspaceId: WorkspaceId, id: MemberId): Promise<void> {
    await this.prisma.member.updateMany({
      where: { id, workspaceId, status: 'invited', removedAt: null },
      data: { status: 'active' },
    });
  }

  async find(workspaceId: WorkspaceId, id: MemberId): Promise<MemberRecord | null> {
    const row = await this.prisma.member.findFirst({
      where: { id, workspaceId, removedAt: null },
      select: RECORD,
    });
    return row ? toRecord(row) : null;
  }

  async findWithWorkspace(
    workspaceId: WorkspaceId,
    id: MemberId,
  ): Promise<{ member: MemberRecord; workspaceName: string } | null> {
    const row = await this.prisma.member.findFirst({
      where: { id, workspaceId, removedAt: null },
      select: { ...RECORD, workspace: { select: { name: true } } },
    });
    return row ? { member: toRecord(row), workspaceName: row.workspace.name } : null;
  }

  async workspaceName(workspaceId: WorkspaceId): Promise<string | null> {
    const row = await this.prisma.workspace.findUnique({
      where: { id: workspaceId },
      select: { name: true },
    });
    return row?.name ?? null;
  }

  async list(workspaceId: WorkspaceId): Promise<MemberRecord[]> {
    const rows = await this.prisma.member.findMany({
      where: { workspaceId, removedAt: null },
      select: RECORD,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map(toRecord);
  }

  /**
   * A new invitation; a removed member with that address is invited again (same id, so
   * their past edits still name them), with `alsoInTx` (the audit entry) in its transaction.
   * `member_exists` when the address is a member already.
   */
  async invite(
    workspaceId: WorkspaceId,
    input: { email: string; name: string | null; role: Role },
    alsoInTx: (tx: Db, member: MemberRecord) => Promise<void> = async () => undefined,
  ): Promise<Result<MemberRecord, 'member_exists'>> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO member (id, workspace_id, email, name, role, status)
      VALUES (gen_random_uuid(), ${workspaceId}::uuid, ${normalizeEmail(input.email)}, ${input.name},
              ${input.role}::role, 'invited'::member_status)
      ON CONFLICT (workspace_id, email) DO UPDATE
        SET removed_at = NULL, status = EXCLUDED.status, role = EXCLUDED.role,
            name = COALESCE(EXCLUDED.name, member.name), created_at = now(), last_sign_in_at = NULL
        WHERE member.removed_at IS NOT NULL
      RETURNING id::text AS id`;
      const id = rows[0]?.id;
      if (id === undefined) return err('member_exists');
      const created = await tx.member.findFirstOrThrow({ where: { id, workspaceId }, select: RECORD });
      await alsoInTx(tx, toRecord(created));
      return ok(toRecord(created));
    });
  }

  /**
   * Changes a member's role, or removes them, unless that leaves the workspace without an
   * active admin. The workspace's admins are locked meanwhile, so two such changes at once
   * cannot both pass the check.
   */
  async changeOrRemove(
    workspaceId: WorkspaceId,
    id: MemberId,
    change: { role: Role } | { removedAt: Date },
    alsoInTx: (tx: Db, before: MemberRecord) => Promise<void> = async () => undefined,
  ): Promise<Result<MemberRecord, 'not_found' | 'last_admin'>> {
    return this.prisma.$transaction(async (tx) => {
      const admins = await tx.$queryRaw<{ id: string }[]>`
        SELECT id::text AS id FROM member
         WHERE workspace_id = ${workspaceId}::uuid AND role = 'admin' AND status = 'active' AND removed_at IS NULL
         FOR UPDATE`;
      const member = await tx.member.findFirst({
        where: { id, workspaceId, removedAt: null },
        select: RECORD,
      });
      if (!member) return err('not_found');
      const losesAdmin = member.role === 'admin' && ('removedAt' in change || change.role !== 'admin');
      const otherAdmins = admins.filter((a) => a.id !== id).length;
      if (losesAdmin && member.status === 'active' && otherAdmins === 0) return err('last_admin');
      const updated = await tx.member.update({
        where: { id },
        data: 'removedAt' in change ? { removedAt: change.removedAt } : { role: change.role },
        select: RECORD,
      });
      await alsoInTx(tx, toRecord(member));
      return ok(toRecord(updated));
    });
  }
}

function toRecord(row: Prisma.MemberGetPayload<{ select: typeof RECORD }>): MemberRecord {
  return {
    id: row.id as MemberId,
    workspaceId: row.workspaceId as WorkspaceId,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    createdAt: row.createdAt,
    lastSignInAt: row.lastSignInAt,
  };
}
