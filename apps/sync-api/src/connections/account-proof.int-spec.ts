import { randomBytes, randomUUID } from 'node:crypto';
import { emulatorControl, type RunningEmulators, startEmulators } from '@syncline/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactPropertyChange, hubspotSignedHeaders } from '../testing/hubspot-webhooks';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { credentialsAad } from './connections.service';
import { MicrosoftDirectory, microsoftAccountOf } from './oauth-testing';

const PUBLIC_BASE_URL = 'https://sync.example.test';
const HUBSPOT_SECRET = `hs-${randomBytes(8).toString('hex')}`;
const GMAIL_TOKEN = `gp-${randomBytes(8).toString('hex')}`;

type Tenant = { workspaceId: string; adminKey: string };
type Credentials = Record<string, unknown>;
/** One provider account in the emulators: its id as the provider spells it, and credentials that open it. */
interface Account {
  externalAccountId: string;
  credentials: () => Promise<Credentials>;
  /** The mailbox's address, where the provider names one. */
  address?: string;
}
type Provider =
  | 'hubspot'
  | 'google-calendar'
  | 'gmail'
  | 'google-tasks'
  | 'microsoft-calendar'
  | 'microsoft-mail'
  | 'microsoft-todo';

/**
 * Issue 20 §2: a connection's account is proven by its credentials. A portal id or an address
 * is no secret: claiming one with credentials of another account (or none the provider knows)
 * must store nothing, change nothing, and let none of that account's data in.
 */
describe('connections: the account is proven by its credentials', () => {
  let emulators: RunningEmulators;
  let microsoft: MicrosoftDirectory;
  let t: TestApp;
  let nextPortal = 40_000 + Math.floor(Math.random() * 5_000);

  const emulator = <T>(base: string, path: string, body: unknown = {}): Promise<T> =>
    emulatorControl(base)<T>('POST', path, body);
  const soon = () => new Date(Date.now() + 1_800_000).toISOString();

  /** A HubSpot portal; each call of `credentials` issues a new private app token of it, or new OAuth tokens. */
  const portal = async (kind: 'private app' | 'oauth'): Promise<Account & { portalId: number }> => {
    const portalId = nextPortal++;
    await emulator(emulators.hubspotUrl, '/_emulator/hubspot/portals', {
      portalId,
      appId: 5001,
      clientSecret: 'shh',
    });
    const credentials = async (): Promise<Credentials> => {
      if (kind === 'private app') {
        const app = await emulator<{ accessToken: string }>(
          emulators.hubspotUrl,
          `/_emulator/hubspot/portals/${portalId}/private-apps`,
        );
        return { privateAppToken: app.accessToken };
      }
      const grant = await emulator<{ accessToken: string; refreshToken: string }>(
        emulators.hubspotUrl,
        `/_emulator/hubspot/portals/${portalId}/tokens`,
      );
      return { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: soon() };
    };
    return { portalId, externalAccountId: String(portalId), credentials };
  };
  /** A Google user; each call of `credentials` issues a new grant of them. */
  const googleUser = async (): Promise<Account> => {
    const email = `rep-${randomBytes(4).toString('hex')}@proof.example`;
    const credentials = async (): Promise<Credentials> => {
      const grant = await emulator<{ accessToken: string; refreshToken: string }>(
        emulators.googleUrl,
        '/_emulator/google/users',
        { email },
      );
      return { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: soon() };
    };
    await credentials();
    return { externalAccountId: email, credentials };
  };
  /** A Microsoft user in a tenant of their own; each call of `credentials` issues a new grant of them. */
  const microsoftUser = async (): Promise<Account> => {
    const user = await microsoft.addUser(`rep-${randomBytes(4).toString('hex')}@proof.example`);
    const credentials = async (): Promise<Credentials> => {
      const grant = await microsoft.grant(user.userPrincipalName);
      return { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: soon() };
    };
    return { externalAccountId: microsoftAccountOf(user), credentials, address: user.userPrincipalName };
  };
  const accountOf = (provider: Provider, kind: 'private app' | 'oauth') =>
    provider === 'hubspot'
      ? portal(kind)
      : provider.startsWith('microsoft-')
        ? microsoftUser()
        : googleUser();

  const create = (tenant: Tenant, payload: object) =>
    t.app.inject({ method: 'POST', url: '/api/v1/connections', headers: bearer(tenant.adminKey), payload });
  const replace = (tenant: Tenant, id: string, payload: object) =>
    t.app.inject({
      method: 'PUT',
      url: `/api/v1/connections/${id}/credentials`,
      headers: bearer(tenant.adminKey),
      payload,
    });
  const connected = async (tenant: Tenant, provider: Provider, account: Account): Promise<string> => {
    const res = await create(tenant, {
      provider,
      externalAccountId: account.externalAccountId,
      credentials: await account.credentials(),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };
  const rowsOf = (tenant: Tenant) =>
    t.prisma.connection.count({ where: { workspaceId: tenant.workspaceId } });
  const auditOf = (tenant: Tenant) =>
    t.prisma.auditLog.count({
      where: { workspaceId: tenant.workspaceId, action: { startsWith: 'connection.' } },
    });
  const storedCredentials = async (id: string): Promise<unknown> => {
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id } });
    if (!row.credentialsCiphertext || !row.credentialsKeyId) return null;
    const opened = t.keyring.open(
      { keyId: row.credentialsKeyId, ciphertext: Buffer.from(row.credentialsCiphertext) },
      credentialsAad(id as never),
    );
    return JSON.parse(opened);
  };
  const errorOf = (res: { json<T>(): T }) => res.json<{ error: { code: string; message: string } }>().error;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    microsoft = await MicrosoftDirectory.register(emulators.microsoftUrl);
    t = await startTestApp('account_proof', {
      MICROSOFT_GRAPH_URL: emulators.microsoftUrl,
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
      GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
      PUBLIC_BASE_URL,
      HUBSPOT_CLIENT_SECRET: HUBSPOT_SECRET,
      HUBSPOT_APP_ID: '999',
      GMAIL_PUSH_TOKEN: GMAIL_TOKEN,
    });
  });
  afterAll(async () => {
    await t?.close();
    await emulators?.close();
  });

  const CASES: [string, Provider, 'private app' | 'oauth'][] = [
    ['hubspot (private app token)', 'hubspot', 'private app'],
    ['hubspot (OAuth tokens)', 'hubspot', 'oauth'],
    ['google-calendar', 'google-calendar', 'oauth'],
    ['gmail', 'gmail', 'oauth'],
    ['google-tasks', 'google-tasks', 'oauth'],
    ['microsoft-calendar', 'microsoft-calendar', 'oauth'],
    ['microsoft-mail', 'microsoft-mail', 'oauth'],
    ['microsoft-todo', 'microsoft-todo', 'oauth'],
  ];

  describe.each(CASES)('%s', (_name, provider, kind) => {
    it('create with a token of another account is 400 account_mismatch, and stores nothing', async () => {
      const victim = await accountOf(provider, kind);
      const attacker = await accountOf(provider, kind);
      const b = await seedWorkspace(t.prisma, `Attacker ${randomBytes(3).toString('hex')}`);
      const res = await create(b, {
        provider,
        externalAccountId: victim.externalAccountId,
        credentials: await attacker.credentials(),
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(errorOf(res)).toEqual({
        code: 'account_mismatch',
        message: expect.stringContaining(attacker.externalAccountId),
      });
      expect(await rowsOf(b)).toBe(0);
      expect(await auditOf(b)).toBe(0);
    });

    it('create with a token the provider refuses is 400 credentials_refused, and stores nothing', async () => {
      const victim = await accountOf(provider, kind);
      const b = await seedWorkspace(t.prisma, `Guesser ${randomBytes(3).toString('hex')}`);
      const credentials =
        kind === 'private app'
          ? { privateAppToken: 'anything' }
          : { accessToken: `ya29.${randomBytes(16).toString('hex')}`, expiresAt: soon() };
      const res = await create(b, { provider, externalAccountId: victim.externalAccountId, credentials });
      expect(res.statusCode, res.body).toBe(400);
      expect(errorOf(res).code).toBe('credentials_refused');
      expect(await rowsOf(b)).toBe(0);
      expect(await auditOf(b)).toBe(0);
    });

    it('the right token is 201, proven, and pulled; new credentials of another account are 400 and the old ones kept', async () => {
      const own = await accountOf(provider, kind);
      const other = await accountOf(provider, kind);
      const a = await seedWorkspace(t.prisma, `Owner ${randomBytes(3).toString('hex')}`);
      const first = await own.credentials();
      const res = await create(a, { provider, externalAccountId: own.externalAccountId, credentials: first });
      expect(res.statusCode, res.body).toBe(201);
      const view = res.json<{ id: string; status: string; credentialsVerifiedAt: string | null }>();
      expect(view).toMatchObject({ status: 'pending', credentialsVerifiedAt: expect.any(String) });
      expect((await t.pullQueue.getJob(`pull.${view.id}`))?.data).toMatchObject({ connectionId: view.id });
      const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: view.id } });
      const proof = provider.startsWith('microsoft-')
        ? 'microsoft_graph_me'
        : provider !== 'hubspot'
          ? 'google_userinfo'
          : kind === 'private app'
            ? 'hubspot_account_info'
            : 'hubspot_token_info';
      expect(row.credentialsProof).toBe(proof);
      expect(await storedCredentials(view.id)).toEqual(first);

      const audited = await auditOf(a);
      const mismatch = await replace(a, view.id, { credentials: await other.credentials() });
      expect(mismatch.statusCode, mismatch.body).toBe(400);
      expect(errorOf(mismatch).code).toBe('account_mismatch');
      const refused = await replace(a, view.id, {
        credentials:
          kind === 'private app' ? { privateAppToken: 'pat-na1-guess' } : { accessToken: 'ya29.guess' },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(errorOf(refused).code).toBe('credentials_refused');
      expect(await storedCredentials(view.id)).toEqual(first);
      expect(await auditOf(a)).toBe(audited);

      // New credentials of the same account are taken, and proven again.
      const second = await own.credentials();
      const replaced = await replace(a, view.id, { credentials: second });
      expect(replaced.statusCode, replaced.body).toBe(200);
      expect(await storedCredentials(view.id)).toEqual(second);
      expect(await auditOf(a)).toBe(audited + 1);
    });
  });

  it("issue 20: another workspace claiming a portal with any token gets a 400, and none of the portal's webhooks", async () => {
    const victimPortal = await portal('private app');
    const a = await seedWorkspace(t.prisma, 'Victim');
    const b = await seedWorkspace(t.prisma, 'Intruder');
    const ofA = await connected(a, 'hubspot', victimPortal);
    const res = await create(b, {
      provider: 'hubspot',
      externalAccountId: victimPortal.externalAccountId,
      credentials: { privateAppToken: 'anything' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(errorOf(res).code).toBe('credentials_refused');
    expect(await rowsOf(b)).toBe(0);

    const ack = await hubspotWebhook([contactChange(victimPortal.portalId, 101, 'email', 'ada@victim.test')]);
    expect(ack).toMatchObject({ outcome: 'appended', connections: 1 });
    expect(await t.prisma.changeEvent.count({ where: { connectionId: ofA } })).toBe(1);
    expect(await t.prisma.changeEvent.count({ where: { workspaceId: b.workspaceId } })).toBe(0);
  });

  it('a HubSpot webhook for a portal is not appended for a workspace whose only connection of it is unproven', async () => {
    const shared = await portal('private app');
    const a = await seedWorkspace(t.prisma, 'Proven');
    const c = await seedWorkspace(t.prisma, 'Claimed before proofs');
    const ofA = await connected(a, 'hubspot', shared);
    // What the bug left behind: a connection made by the portal id alone, before accounts were
    // proven (the migration leaves it unproven), waiting for credentials.
    const claimed = randomUUID();
    await t.prisma.$executeRaw`
      INSERT INTO connection (id, workspace_id, provider, external_account_id, status, status_reason)
      VALUES (${claimed}::uuid, ${c.workspaceId}::uuid, 'hubspot', ${shared.externalAccountId}, 'needs_reauth',
              'the private app token was refused')`;
    const ack = await hubspotWebhook([
      contactChange(shared.portalId, 201, 'email', 'grace@shared.test'),
      contactChange(shared.portalId, 201, 'phone', '+1 555 0100'),
    ]);
    expect(ack).toMatchObject({ outcome: 'appended', connections: 1, changes: 2 });
    expect(await t.prisma.changeEvent.count({ where: { connectionId: ofA } })).toBe(2);
    expect(await t.prisma.changeEvent.count({ where: { connectionId: claimed } })).toBe(0);
    expect(await t.prisma.changeEvent.count({ where: { workspaceId: c.workspaceId } })).toBe(0);

    // Alone, it takes nothing at all.
    const alone = await portal('private app');
    await t.prisma.$executeRaw`
      INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
      VALUES (${randomUUID()}::uuid, ${c.workspaceId}::uuid, 'hubspot', ${alone.externalAccountId}, 'live')`;
    expect(await hubspotWebhook([contactChange(alone.portalId, 301, 'email', 'x@alone.test')])).toMatchObject(
      {
        outcome: 'ignored',
        connections: 0,
      },
    );
    expect(await t.prisma.changeEvent.count({ where: { workspaceId: c.workspaceId } })).toBe(0);
  });

  it('a Gmail push for a mailbox whose only connection is unproven pulls nothing', async () => {
    const c = await seedWorkspace(t.prisma, 'Mailbox claimed');
    const id = randomUUID();
    const address = `boss-${randomBytes(3).toString('hex')}@victim.test`;
    await t.prisma.$executeRaw`
      INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
      VALUES (${id}::uuid, ${c.workspaceId}::uuid, 'gmail', ${address}, 'live')`;
    const data = Buffer.from(JSON.stringify({ emailAddress: address, historyId: 42 })).toString('base64url');
    const res = await t.app.inject({
      method: 'POST',
      url: `/webhooks/gmail?token=${GMAIL_TOKEN}`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${GMAIL_TOKEN}` },
      payload: JSON.stringify({
        message: { data, messageId: '1' },
        subscription: 'projects/p/subscriptions/s',
      }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ outcome: 'ignored', connections: 0 });
    expect(await t.pullQueue.getJob(`pull.${id}`)).toBeUndefined();
  });

  it('a portal connected to two workspaces, each with its own proof, feeds both', async () => {
    const shared = await portal('private app');
    const oauth = await emulator<{ accessToken: string; refreshToken: string }>(
      emulators.hubspotUrl,
      `/_emulator/hubspot/portals/${shared.portalId}/tokens`,
    );
    const a = await seedWorkspace(t.prisma, 'Sales team');
    const d = await seedWorkspace(t.prisma, 'Support team');
    const ofA = await connected(a, 'hubspot', shared);
    const ofD = await connected(d, 'hubspot', {
      externalAccountId: shared.externalAccountId,
      credentials: async () => ({
        accessToken: oauth.accessToken,
        refreshToken: oauth.refreshToken,
        expiresAt: soon(),
      }),
    });
    const ack = await hubspotWebhook([contactChange(shared.portalId, 401, 'email', 'both@shared.test')]);
    expect(ack).toMatchObject({ outcome: 'appended', connections: 2, changes: 2 });
    expect(await t.prisma.changeEvent.count({ where: { connectionId: ofA } })).toBe(1);
    expect(await t.prisma.changeEvent.count({ where: { connectionId: ofD } })).toBe(1);
  });

  it('a Google address is proven without regard to case, and stored as Google spells it', async () => {
    const user = await googleUser();
    const a = await seedWorkspace(t.prisma, 'Cased');
    const res = await create(a, {
      provider: 'gmail',
      externalAccountId: user.externalAccountId.toUpperCase(),
      credentials: await user.credentials(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ externalAccountId: user.externalAccountId });
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: res.json<{ id: string }>().id } });
    expect(row.accountAddress).toBe(user.externalAccountId.toLowerCase());
  });

  it('a Microsoft account is `<tid>:<oid>`, proven without regard to case, a personal one in the consumers tenant', async () => {
    const a = await seedWorkspace(t.prisma, 'Microsoft cased');
    const work = await microsoftUser();
    const res = await create(a, {
      provider: 'microsoft-mail',
      externalAccountId: work.externalAccountId.toUpperCase(),
      credentials: await work.credentials(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ externalAccountId: work.externalAccountId });
    // Whose mailbox it is, as Graph's /me names it: what decides whose meetings it receives.
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: res.json<{ id: string }>().id } });
    expect(row.accountAddress).toBe(work.address?.toLowerCase());

    const personal = await microsoft.addUser(
      `me-${randomBytes(4).toString('hex')}@outlook.example`,
      '9188040d-6c67-4c5b-b112-36a304b66dad',
    );
    const grant = await microsoft.grant(personal.userPrincipalName);
    const own = await create(a, {
      provider: 'microsoft-todo',
      externalAccountId: `9188040d-6c67-4c5b-b112-36a304b66dad:${personal.id}`,
      credentials: { accessToken: grant.accessToken, refreshToken: grant.refreshToken },
    });
    expect(own.statusCode, own.body).toBe(201);
    // The same object id claimed in another tenant is another account.
    const elsewhere = await create(a, {
      provider: 'microsoft-calendar',
      externalAccountId: `${randomUUID()}:${personal.id}`,
      credentials: { accessToken: grant.accessToken },
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(400);
    expect(errorOf(elsewhere).code).toBe('account_mismatch');
  });

  it('a throttled provider is asked again within a few seconds; throttled beyond them, 503 and nothing stored', async () => {
    const a = await seedWorkspace(t.prisma, 'Microsoft throttled');
    const rep = await microsoftUser();
    const fault = (count: number) =>
      emulator(emulators.microsoftUrl, '/_emulator/faults', {
        service: 'microsoft',
        kind: 'rate-limit',
        account: rep.address,
        count,
      });
    const connect = async (provider: Provider) =>
      create(a, { provider, externalAccountId: rep.externalAccountId, credentials: await rep.credentials() });
    // Two 429s (Retry-After 1 s each): the third ask names the account.
    await fault(2);
    const res = await connect('microsoft-calendar');
    expect(res.statusCode, res.body).toBe(201);
    // Throttled on every ask: a 503 to try again, and no connection.
    const before = await rowsOf(a);
    await fault(10);
    const refused = await connect('microsoft-mail');
    expect(refused.statusCode, refused.body).toBe(503);
    expect(await rowsOf(a)).toBe(before);
    await emulatorControl(emulators.microsoftUrl)('DELETE', '/_emulator/faults');
  });

  it('a Google token that does not name its address (no email scope) is 400 account_unproven', async () => {
    const email = `bare-${randomBytes(4).toString('hex')}@proof.example`;
    const grant = await emulator<{ accessToken: string }>(emulators.googleUrl, '/_emulator/google/users', {
      email,
      scope: 'https://www.googleapis.com/auth/calendar',
    });
    const a = await seedWorkspace(t.prisma, 'Unscoped');
    const res = await create(a, {
      provider: 'google-calendar',
      externalAccountId: email,
      credentials: { accessToken: grant.accessToken },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(errorOf(res).code).toBe('account_unproven');
    expect(await rowsOf(a)).toBe(0);
  });

  describe('credentials have one strict schema per provider', () => {
    const wideObject = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 'v']));
    const BAD: [string, Provider, unknown][] = [
      ['a number', 'hubspot', 42],
      ['an array', 'hubspot', ['pat-na1-x']],
      ['an empty object', 'hubspot', {}],
      ['5,000 keys', 'hubspot', wideObject],
      ['a number for a token', 'hubspot', { privateAppToken: 5 }],
      ['an unknown key beside a token', 'hubspot', { privateAppToken: 'pat-na1-x', note: 'hi' }],
      ['both kinds at once', 'hubspot', { privateAppToken: 'pat-na1-x', accessToken: 'x' }],
      ['a private app token for Google', 'gmail', { privateAppToken: 'pat-na1-x' }],
      ['no access token', 'google-tasks', { refreshToken: '1//x' }],
      ['a malformed expiry', 'google-calendar', { accessToken: 'x', expiresAt: 'tomorrow' }],
    ];

    it.each(BAD)(
      'create refuses %s (400 validation_failed), storing nothing',
      async (_what, provider, credentials) => {
        const a = await seedWorkspace(t.prisma, `Strict ${randomBytes(3).toString('hex')}`);
        const res = await create(a, { provider, externalAccountId: 'acct', credentials });
        expect(res.statusCode, res.body).toBe(400);
        expect(errorOf(res).code).toBe('validation_failed');
        expect(await rowsOf(a)).toBe(0);
      },
    );

    it('new credentials are refused the same way, and the working ones kept', async () => {
      const hub = await portal('private app');
      const user = await googleUser();
      const a = await seedWorkspace(t.prisma, 'Kept');
      const ofHub = await connected(a, 'hubspot', hub);
      const ofGmail = await connected(a, 'gmail', user);
      const hubCredentials = await storedCredentials(ofHub);
      const gmailCredentials = await storedCredentials(ofGmail);
      for (const [id, provider, credentials] of BAD) {
        const target = provider === 'hubspot' ? ofHub : ofGmail;
        const res = await replace(a, target, { credentials });
        expect(res.statusCode, `${id}: ${res.body}`).toBe(400);
        expect(errorOf(res).code).toBe('validation_failed');
      }
      // A Google connection takes no private app token, nor a body with more than credentials.
      for (const payload of [
        { credentials: { privateAppToken: 'pat-na1-x' } },
        { credentials: await user.credentials(), status: 'live' },
      ]) {
        const res = await replace(a, ofGmail, payload);
        expect(res.statusCode, res.body).toBe(400);
        expect(errorOf(res).code).toBe('validation_failed');
      }
      expect(await storedCredentials(ofHub)).toEqual(hubCredentials);
      expect(await storedCredentials(ofGmail)).toEqual(gmailCredentials);
    });
  });

  /** Posts a HubSpot webhook batch signed as HubSpot signs it (v3); the API's answer. */
  async function hubspotWebhook(events: object[]): Promise<unknown> {
    const body = JSON.stringify(events);
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/hubspot',
      headers: hubspotSignedHeaders(body, {
        secret: HUBSPOT_SECRET,
        url: `${PUBLIC_BASE_URL}/webhooks/hubspot`,
      }),
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
});

const contactChange = (portalId: number, objectId: number, propertyName: string, propertyValue: string) =>
  contactPropertyChange({ portalId, objectId, propertyName, propertyValue });
