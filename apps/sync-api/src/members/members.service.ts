import { Injectable } from '@nestjs/common';
import { MembersRepository } from './members.repository';

/** The people of a workspace: who may sign in, with which role. */
@Injectable()
export class MembersService {
  constructor(private readonly members: MembersRepository) {}

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
}
