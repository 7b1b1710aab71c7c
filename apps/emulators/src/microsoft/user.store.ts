import { randomUUID } from 'node:crypto';

/** A Microsoft 365 user: a mailbox with a calendar and To Do, in one tenant. */
export interface MicrosoftUser {
  /** The object id (`oid` in id tokens, `id` of /me): stable for the user's life. */
  id: string;
  /** The tenant (`tid`); personal accounts share 9188040d-6c67-4c5b-b112-36a304b66dad. */
  tenantId: string;
  /** The sign-in name (`preferred_username`): may change, so never a key. */
  userPrincipalName: string;
  displayName: string;
  mail: string;
}

export const PERSONAL_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

export class MicrosoftUsers {
  private readonly byId = new Map<string, MicrosoftUser>();

  add(input: {
    userPrincipalName: string;
    displayName?: string;
    tenantId?: string;
    id?: string;
  }): MicrosoftUser {
    const upn = input.userPrincipalName.toLowerCase();
    const existing = this.byUpn(upn);
    if (existing) return existing;
    const user: MicrosoftUser = {
      id: input.id ?? randomUUID(),
      tenantId: input.tenantId ?? randomUUID(),
      userPrincipalName: upn,
      displayName: input.displayName ?? upn.split('@')[0]!,
      mail: upn,
    };
    this.byId.set(user.id, user);
    return user;
  }

  /** A new sign-in name or display name; the object id stays (why apps key on `oid`). */
  update(
    id: string,
    changes: { userPrincipalName?: string; displayName?: string },
  ): MicrosoftUser | 'taken' | undefined {
    const user = this.byId.get(id);
    if (!user) return undefined;
    const upn = changes.userPrincipalName?.toLowerCase();
    if (upn !== undefined && upn !== user.userPrincipalName) {
      if (this.byUpn(upn)) return 'taken';
      user.userPrincipalName = upn;
      user.mail = upn;
    }
    if (changes.displayName !== undefined) user.displayName = changes.displayName;
    return user;
  }

  get(id: string): MicrosoftUser | undefined {
    return this.byId.get(id);
  }

  byUpn(upn: string): MicrosoftUser | undefined {
    const wanted = upn.toLowerCase();
    for (const user of this.byId.values()) if (user.userPrincipalName === wanted) return user;
    return undefined;
  }

  list(): MicrosoftUser[] {
    return [...this.byId.values()];
  }
}
