import { createHash } from 'node:crypto';
import { Mulberry32 } from '@syncline/core';
import {
  type EmulatorUrls,
  emulatorClient,
  type MicrosoftControl,
  type OutlookAttendeeInput,
} from '../e2e/support/emulator-client';
import type { DemoWorldPlan, OAuthCredentials } from './demo-world';

/**
 * A second salesperson of the demo's company, on Microsoft 365: Marco Rossi, in Brightwave's
 * own tenant, with an Outlook calendar of meetings with the CRM people of planDemoWorld, a
 * mailbox of conversations with them (inbox and sent items) and a To Do list.
 *
 * Two items are shared with Dana Okafor's Google world (seedDemoWorld): one of her calendar
 * meetings is in Marco's calendar too (same time, the same iCalendar UID, both of them
 * attendees: her Google copy is given Marco as an attendee), and one mail she has in Gmail
 * reached Marco too (same Message-ID, Marco on cc).
 *
 * Like seedDemoWorld, everything is written as a person makes it (the emulator's "ui" routes),
 * decided from the seed alone (planOutlookUser); the emulator's own ids are random. Seed after
 * seedDemoWorld: the shared meeting is found in Dana's Google calendar.
 */

/** Brightwave's Microsoft 365 tenant. */
export const BRIGHTWAVE_TENANT_ID = '3f6a9c1e-52b7-4d08-9e4a-b1c27d5e8f30';

export const DEMO_OUTLOOK_USER = Object.freeze({
  upn: 'marco.rossi@brightwave.io',
  displayName: 'Marco Rossi',
});

/** What the salesperson consents to when connecting Outlook, To Do and the mailbox. */
export const OUTLOOK_GRANT_SCOPES: readonly string[] = Object.freeze([
  'openid',
  'email',
  'profile',
  'offline_access',
  'User.Read',
  'Calendars.ReadWrite',
  'Mail.Read',
  'Tasks.ReadWrite',
]);

/** The app registered when the caller passes none (the demo passes its own). */
export const DEMO_MICROSOFT_APP = Object.freeze({
  clientId: '7d2c4b9a-1e35-4f60-8a7b-c4d9e2f10b56',
  clientSecret: 'syncline-demo-microsoft-secret',
});

export interface OutlookUserOptions {
  /** Default marco.rossi@brightwave.io. */
  upn?: string;
  /** Default "Marco Rossi" (the address's local part for another upn). */
  displayName?: string;
  /** Default BRIGHTWAVE_TENANT_ID. */
  tenantId?: string;
  /** Calendar events, the shared meeting among them. Default max(3, people / 10). */
  meetings?: number;
  /** Mails, the shared one among them. Default max(4, people / 8). */
  messages?: number;
  /** To Do tasks. Default between 4 and 10 (people / 40). */
  tasks?: number;
}

export interface SeedOutlookUserOptions extends OutlookUserOptions {
  /** The app the grant is for, already registered. Without it DEMO_MICROSOFT_APP is registered. */
  app?: { clientId: string; clientSecret: string };
  /** The redirect URIs of DEMO_MICROSOFT_APP when it is registered here. */
  redirectUris?: string[];
  /** Default true: Marco is added to the shared meeting's attendees in Dana's Google calendar. */
  inviteInGoogle?: boolean;
}

export interface PlannedAttendee {
  /** The CRM person (absent for Brightwave's own people). */
  personId?: string;
  name: string;
  email: string;
  response: 'none' | 'accepted' | 'tentativelyAccepted' | 'declined';
}

export interface PlannedOutlookMeeting {
  key: string;
  subject: string;
  /** Epoch ms. */
  start: number;
  minutes: number;
  attendees: PlannedAttendee[];
  location: string;
  online: boolean;
  agenda: string;
  /** The shared meeting: the key of Dana's meeting (DemoWorldPlan.meetings) it is. */
  googleMeetingKey?: string;
}

export interface PlannedOutlookMail {
  key: string;
  folder: 'inbox' | 'sentitems';
  /** `Name <address>`. */
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  /** ISO instant. */
  sentAt: string;
  internetMessageId: string;
  conversationId: string;
  text: string;
  isRead: boolean;
  /** The CRM person the mail is with. */
  personId: string;
  /** The shared mail: Dana has it in Gmail under the same Message-ID. */
  alsoInGmail?: boolean;
}

export interface PlannedTodoTask {
  key: string;
  title: string;
  notes: string;
  /** YYYY-MM-DD. */
  due: string;
  /** YYYY-MM-DD, when completed. */
  completedOn?: string;
  importance: 'normal' | 'high';
  personId: string;
}

export interface OutlookUserPlan {
  seed: number;
  anchor: string;
  upn: string;
  displayName: string;
  tenantId: string;
  meetings: PlannedOutlookMeeting[];
  /** Conversations, each in the order its mails were sent. */
  conversations: PlannedOutlookMail[][];
  tasks: PlannedTodoTask[];
  shared: {
    /** The Outlook meeting that is one of Dana's Google meetings. */
    meetingKey: string;
    googleMeetingKey: string;
    /** The mail Dana also has in Gmail (absent when her plan has no mail from a CRM person). */
    mailKey?: string;
    internetMessageId?: string;
  };
}

export interface DemoOutlookUser {
  upn: string;
  displayName: string;
  /** The user's object id (`oid`). */
  userId: string;
  tenantId: string;
  /** What to connect with: `<tenantId>:<userId>`, lower case. */
  externalAccountId: string;
  credentials: OAuthCredentials;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  counts: {
    events: number;
    messages: number;
    inbox: number;
    sent: number;
    conversations: number;
    tasks: number;
    completedTasks: number;
  };
  /** Planned key → Graph id. */
  eventIds: Record<string, string>;
  messageIds: Record<string, string>;
  taskIds: Record<string, string>;
  sharedMeeting: {
    key: string;
    googleMeetingKey: string;
    googleEventId: string;
    /** The Google event's iCalUID, given to the Outlook event. */
    iCalUId: string;
    outlookEventId: string;
    /** The iCalUId Outlook reports for the event. */
    outlookICalUId: string;
    /** Whether Outlook kept the Google UID (see the report on the emulator's ui route). */
    sameICalUId: boolean;
    start: string;
    end: string;
    subject: string;
  };
  sharedMessage: {
    key: string;
    internetMessageId: string;
    outlookMessageId: string;
    /** Dana's Gmail message with that Message-ID, if found. */
    gmailMessageId: string | null;
  } | null;
}

// ---------------------------------------------------------------------------------------

class Rng extends Mulberry32 {
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A weekday `dayOffset` days from the anchor, in business hours (UTC), at a quarter hour. */
function meetingTime(anchorMs: number, dayOffset: number, rng: Rng): number {
  let day = Math.floor(anchorMs / DAY) * DAY + dayOffset * DAY;
  while ([0, 6].includes(new Date(day).getUTCDay())) day += dayOffset < 0 ? -DAY : DAY;
  return day + rng.int(8, 16) * HOUR + rng.pick([0, 15, 30, 45]) * 60_000;
}

/** An Exchange-shaped conversation id, the same for a seed and a conversation. */
function conversationIdFor(seed: number, n: number): string {
  const bytes = createHash('sha256').update(`syncline-demo-outlook:${seed}:c${n}`).digest();
  return `AAQkAD${Buffer.concat([bytes, bytes]).subarray(0, 33).toString('base64url')}`;
}

/** `Name <address>` → its address. */
export const addressOf = (mailbox: string): string => /<([^<>]+)>\s*$/.exec(mailbox)?.[1] ?? mailbox.trim();

export const outlookExternalAccountId = (tenantId: string, userId: string): string =>
  `${tenantId}:${userId}`.toLowerCase();

const SUBJECTS = [
  'Kick-off',
  'Technical deep dive',
  'Security review',
  'Onboarding session',
  'Renewal check-in',
  'Executive sponsor call',
];
const MAIL_SUBJECTS = [
  'Statement of work for {company}',
  'Your onboarding plan',
  'Security questionnaire',
  'Renewal quote',
  'Recap: {company} x Brightwave',
  'Integration timeline',
];
const TASK_VERBS = [
  'Send the SOW to',
  'Prepare a renewal quote for',
  'Follow up with',
  'Schedule onboarding with',
  'Answer the security questionnaire from',
];

/** Everything seedOutlookUser will create, decided from Dana's plan and its seed (no I/O). */
export function planOutlookUser(plan: DemoWorldPlan, options: OutlookUserOptions = {}): OutlookUserPlan {
  const rng = new Rng(Math.imul(plan.seed, 0x85ebca6b) ^ 0x4f75746c);
  const anchorMs = Date.parse(plan.anchor);
  const upn = (options.upn ?? DEMO_OUTLOOK_USER.upn).toLowerCase();
  const displayName =
    options.displayName ??
    (upn === DEMO_OUTLOOK_USER.upn ? DEMO_OUTLOOK_USER.displayName : upn.split('@')[0]!);
  const tenantId = (options.tenantId ?? BRIGHTWAVE_TENANT_ID).toLowerCase();
  const people = plan.people;
  const companyName = new Map(plan.companies.map((c) => [c.key, c.name]));
  const mailbox = (name: string, email: string) => `${name} <${email}>`;
  const nameOf = (p: (typeof people)[number]) => `${p.firstName} ${p.lastName}`;
  const count = people.length;

  // ---- calendar: Marco's own meetings, and one of Dana's ----
  const meetingCount = Math.max(1, options.meetings ?? Math.max(3, Math.round(count / 10)));
  const candidates = plan.meetings.filter((m) => !m.alsoInHubspot);
  const danaMeeting = rng.pick(candidates.length > 0 ? candidates : plan.meetings);
  if (!danaMeeting) throw new Error('planOutlookUser: the demo world plan has no meetings to share');
  const meetings: PlannedOutlookMeeting[] = [];
  for (let i = 0; i < meetingCount - 1; i++) {
    const lead = rng.pick(people);
    const colleagues = people.filter((p) => p.companyKey === lead.companyKey && p.id !== lead.id);
    const invited = [lead, ...colleagues.slice(0, rng.int(0, Math.min(2, colleagues.length)))];
    const company = companyName.get(lead.companyKey)!;
    // The first is in the past and the second ahead, whatever the draw; the rest anywhere in the window.
    const offset = i === 0 ? rng.int(-21, -2) : i === 1 ? rng.int(2, 14) : rng.int(-21, 14);
    const online = rng.chance(0.6);
    const start = meetingTime(anchorMs, offset, rng);
    meetings.push({
      key: '',
      subject: `${rng.pick(SUBJECTS)}: ${company}`,
      start,
      minutes: rng.pick([30, 45, 60, 60]),
      attendees: invited.map((p) => ({
        personId: p.id,
        name: nameOf(p),
        email: p.email,
        response:
          start < anchorMs ? 'accepted' : rng.pick(['none', 'accepted', 'tentativelyAccepted'] as const),
      })),
      location: online ? 'Microsoft Teams Meeting' : `${company} office`,
      online,
      agenda: `Agenda for ${company}: ${rng.pick(['scope and timeline', 'pricing', 'rollout plan', 'open questions'])}.`,
    });
  }
  meetings.push({
    key: '',
    subject: danaMeeting.summary,
    start: danaMeeting.start,
    minutes: danaMeeting.minutes,
    attendees: [
      { name: plan.userName, email: plan.userEmail, response: 'accepted' },
      { name: displayName, email: upn, response: 'accepted' },
      ...danaMeeting.attendees.map((a) => ({
        personId: a.personId,
        name: a.displayName,
        email: a.email,
        response: 'accepted' as const,
      })),
    ],
    location: danaMeeting.location,
    online: false,
    agenda: `Agenda: ${danaMeeting.summary}`,
    googleMeetingKey: danaMeeting.key,
  });
  meetings.sort((x, y) => x.start - y.start);
  meetings.forEach((m, i) => {
    m.key = `o${String(i + 1).padStart(3, '0')}`;
  });
  const sharedMeeting = meetings.find((m) => m.googleMeetingKey)!;

  // ---- mail: conversations with the people, before the anchor; one mail of Dana's ----
  const messageCount = Math.max(1, options.messages ?? Math.max(4, Math.round(count / 8)));
  const danaMails = plan.threads.flat().filter((m) => addressOf(m.from).toLowerCase() !== plan.userEmail);
  const danaMail = danaMails.length > 0 ? rng.pick(danaMails) : undefined;
  const conversations: PlannedOutlookMail[][] = [];
  let planned = 0;
  const own = messageCount - (danaMail ? 1 : 0);
  for (let c = 0; planned < own; c++) {
    const person = rng.pick(people);
    const company = companyName.get(person.companyKey)!;
    const them = mailbox(nameOf(person), person.email);
    const subject = rng.pick(MAIL_SUBJECTS).replace('{company}', company);
    // The first conversation has replies back and forth, whatever the draw.
    const length = Math.min(own - planned, c === 0 ? 3 : rng.int(1, 3));
    let at = anchorMs - rng.int(3, 40) * DAY + rng.int(7, 17) * HOUR;
    let fromThem = rng.chance(0.5);
    const conversation: PlannedOutlookMail[] = [];
    for (let j = 0; j < length; j++) {
      const domain = fromThem ? person.email.split('@')[1]! : upn.split('@')[1]!;
      conversation.push({
        key: `c${c + 1}m${j + 1}`,
        folder: fromThem ? 'inbox' : 'sentitems',
        from: fromThem ? them : mailbox(displayName, upn),
        to: [fromThem ? mailbox(displayName, upn) : them],
        cc: [],
        subject: j === 0 ? subject : `RE: ${subject}`,
        sentAt: new Date(at).toISOString(),
        internetMessageId: `<demo-${plan.seed}-outlook-c${c + 1}-m${j + 1}@${domain}>`,
        conversationId: conversationIdFor(plan.seed, c + 1),
        text: fromThem
          ? `Hi ${displayName.split(' ')[0]},\n\n${rng.pick(['Thanks for the call.', 'Please find our comments attached.', 'Can we move the start date?', 'Procurement has signed off.'])}\n\n${person.firstName}`
          : `Hi ${person.firstName},\n\n${rng.pick(['As promised, the draft is attached.', 'Happy to walk you through it.', 'Checking in on the questionnaire.', 'Looking forward to next week.'])}\n\nBest,\n${displayName}`,
        isRead: fromThem ? rng.chance(0.7) : true,
        personId: person.id,
      });
      at += rng.int(1, 20) * HOUR;
      fromThem = !fromThem;
      planned++;
    }
    conversations.push(conversation);
  }
  let sharedMail: PlannedOutlookMail | undefined;
  if (danaMail) {
    const from = addressOf(danaMail.from).toLowerCase();
    const person = people.find((p) => p.email.toLowerCase() === from) ?? people[0]!;
    sharedMail = {
      key: `c${conversations.length + 1}m1`,
      folder: 'inbox',
      from: danaMail.from,
      to: danaMail.to,
      cc: [...danaMail.cc, mailbox(displayName, upn)],
      subject: danaMail.subject,
      sentAt: danaMail.date,
      internetMessageId: danaMail.messageId,
      conversationId: conversationIdFor(plan.seed, conversations.length + 1),
      text: danaMail.text,
      isRead: true,
      personId: person.id,
      alsoInGmail: true,
    };
    conversations.push([sharedMail]);
  }

  // ---- To Do ----
  const taskCount = Math.max(1, options.tasks ?? Math.min(10, Math.max(4, Math.round(count / 40))));
  const tasks: PlannedTodoTask[] = [];
  for (let i = 0; i < taskCount; i++) {
    const person = rng.pick(people);
    const company = companyName.get(person.companyKey)!;
    const due = anchorMs + rng.int(-10, 21) * DAY;
    // Every third is done (the first of them on the day before it was due).
    const completed = i % 3 === 1;
    tasks.push({
      key: `t${String(i + 1).padStart(3, '0')}`,
      title: `${rng.pick(TASK_VERBS)} ${nameOf(person)} (${company})`,
      notes: `${person.email} · ${person.phone}`,
      due: isoDay(due),
      ...(completed ? { completedOn: isoDay(Math.min(due, anchorMs) - DAY) } : {}),
      importance: rng.chance(0.3) ? 'high' : 'normal',
      personId: person.id,
    });
  }

  return {
    seed: plan.seed,
    anchor: plan.anchor,
    upn,
    displayName,
    tenantId,
    meetings,
    conversations,
    tasks,
    shared: {
      meetingKey: sharedMeeting.key,
      googleMeetingKey: danaMeeting.key,
      ...(sharedMail ? { mailKey: sharedMail.key, internetMessageId: sharedMail.internetMessageId } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------

/** Graph's dateTimeTimeZone for an instant, in UTC. */
const graphTime = (ms: number) => ({ dateTime: new Date(ms).toISOString().slice(0, 23), timeZone: 'UTC' });

/**
 * Builds Marco's mailbox in the Microsoft emulator at `urls.microsoft` (and, for the shared
 * meeting, reads and updates Dana's Google calendar at `urls.google`), and says what it made.
 */
export async function seedOutlookUser(
  urls: EmulatorUrls,
  plan: DemoWorldPlan,
  options: SeedOutlookUserOptions = {},
): Promise<DemoOutlookUser> {
  const emu = emulatorClient(urls);
  const ms: MicrosoftControl | undefined = emu.microsoft;
  if (!ms) throw new Error('seedOutlookUser: the emulators have no Microsoft 365 URL (urls.microsoft)');
  const outlook = planOutlookUser(plan, options);
  const { upn } = outlook;

  // The shared meeting as Dana's Google calendar has it (seedDemoWorld made it).
  const danaMeeting = plan.meetings.find((m) => m.key === outlook.shared.googleMeetingKey)!;
  const googleEvents = await emu.google.calendar.list(plan.userEmail);
  const googleEvent = googleEvents.find(
    (e) =>
      e.status !== 'cancelled' &&
      e.summary === danaMeeting.summary &&
      Date.parse(e.start?.dateTime ?? '') === danaMeeting.start,
  );
  if (!googleEvent)
    throw new Error(
      `seedOutlookUser: "${danaMeeting.summary}" is not in ${plan.userEmail}'s Google calendar; seed the demo world (seedDemoWorld) first`,
    );

  const app =
    options.app ??
    (await ms.registerApp({
      clientId: DEMO_MICROSOFT_APP.clientId,
      clientSecret: DEMO_MICROSOFT_APP.clientSecret,
      redirectUris: options.redirectUris ?? [],
      displayName: 'Syncline',
    }));
  const user = await ms.createUser({ upn, displayName: outlook.displayName, tenantId: outlook.tenantId });
  const scopes = [...OUTLOOK_GRANT_SCOPES];
  const grant = await ms.grant(upn, app.clientId, scopes);

  const eventIds: Record<string, string> = {};
  let sharedOutlookEvent: { id: string; iCalUId: string } | undefined;
  for (const m of outlook.meetings) {
    const attendees: OutlookAttendeeInput[] = m.attendees.map((a) => ({
      type: 'required',
      emailAddress: { name: a.name, address: a.email },
      status: { response: a.response },
    }));
    const event = await ms.calendar.create(upn, {
      subject: m.subject,
      body: { contentType: 'text', content: m.agenda },
      start: graphTime(m.start),
      end: graphTime(m.start + m.minutes * 60_000),
      location: { displayName: m.location },
      attendees,
      ...(m.online ? { isOnlineMeeting: true, onlineMeetingProvider: 'teamsForBusiness' as const } : {}),
      // Dana's invitation, as it reached Marco's mailbox: her meeting's UID and her as organizer.
      ...(m.googleMeetingKey
        ? {
            iCalUId: googleEvent.iCalUID,
            organizer: { emailAddress: { name: plan.userName, address: plan.userEmail } },
          }
        : {}),
    });
    eventIds[m.key] = event.id;
    if (m.googleMeetingKey) sharedOutlookEvent = { id: event.id, iCalUId: event.iCalUId };
  }

  // Marco is on Dana's invitation too.
  if (options.inviteInGoogle ?? true) {
    const invited = googleEvent.attendees ?? [];
    if (!invited.some((a) => a.email.toLowerCase() === upn))
      await emu.google.calendar.update(plan.userEmail, googleEvent.id, {
        attendees: [...invited, { email: upn, displayName: outlook.displayName, responseStatus: 'accepted' }],
      });
  }

  const messageIds: Record<string, string> = {};
  let inbox = 0;
  let sent = 0;
  for (const conversation of outlook.conversations) {
    for (const mail of conversation) {
      const message = await ms.mail.deliver(upn, {
        folder: mail.folder,
        from: mail.from,
        to: mail.to,
        cc: mail.cc,
        subject: mail.subject,
        body: mail.text,
        sentAt: mail.sentAt,
        internetMessageId: mail.internetMessageId,
        conversationId: mail.conversationId,
        isRead: mail.isRead,
      });
      // The id that survives moves (what the connector reads under Prefer: IdType="ImmutableId").
      messageIds[mail.key] = message.immutableId;
      if (mail.folder === 'inbox') inbox++;
      else sent++;
    }
  }

  const taskIds: Record<string, string> = {};
  let completedTasks = 0;
  for (const t of outlook.tasks) {
    const task = await ms.todo.create(upn, {
      title: t.title,
      body: { contentType: 'text', content: t.notes },
      importance: t.importance,
      dueDateTime: graphTime(Date.parse(`${t.due}T00:00:00.000Z`)),
    });
    taskIds[t.key] = task.id;
    if (t.completedOn) {
      await ms.todo.complete(upn, task.id, new Date(`${t.completedOn}T17:00:00.000Z`));
      completedTasks++;
    }
  }

  let sharedMessage: DemoOutlookUser['sharedMessage'] = null;
  if (outlook.shared.mailKey && outlook.shared.internetMessageId) {
    const wanted = outlook.shared.internetMessageId;
    const gmail = await emu.google.gmail.list(plan.userEmail);
    const found = gmail.find((m) =>
      m.payload?.headers.some((h) => h.name.toLowerCase() === 'message-id' && h.value === wanted),
    );
    sharedMessage = {
      key: outlook.shared.mailKey,
      internetMessageId: wanted,
      outlookMessageId: messageIds[outlook.shared.mailKey]!,
      gmailMessageId: found?.id ?? null,
    };
  }

  const shared = outlook.meetings.find((m) => m.key === outlook.shared.meetingKey)!;
  return {
    upn,
    displayName: outlook.displayName,
    userId: user.id,
    tenantId: user.tenantId.toLowerCase(),
    externalAccountId: outlookExternalAccountId(user.tenantId, user.id),
    credentials: {
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: new Date(Date.now() + grant.expiresIn * 1000).toISOString(),
    },
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    scopes,
    counts: {
      events: outlook.meetings.length,
      messages: inbox + sent,
      inbox,
      sent,
      conversations: outlook.conversations.length,
      tasks: outlook.tasks.length,
      completedTasks,
    },
    eventIds,
    messageIds,
    taskIds,
    sharedMeeting: {
      key: shared.key,
      googleMeetingKey: danaMeeting.key,
      googleEventId: googleEvent.id,
      iCalUId: googleEvent.iCalUID,
      outlookEventId: sharedOutlookEvent!.id,
      outlookICalUId: sharedOutlookEvent!.iCalUId,
      sameICalUId: sharedOutlookEvent!.iCalUId === googleEvent.iCalUID,
      start: new Date(shared.start).toISOString(),
      end: new Date(shared.start + shared.minutes * 60_000).toISOString(),
      subject: shared.subject,
    },
    sharedMessage,
  };
}

/** Lines a demo can print about Marco's mailbox. */
export function describeOutlookUser(user: DemoOutlookUser): string[] {
  const m = user.sharedMeeting;
  return [
    `Microsoft 365 (${user.upn}, tenant ${user.tenantId}): ${user.counts.events} meetings, ${user.counts.messages} messages (${user.counts.inbox} received, ${user.counts.sent} sent) in ${user.counts.conversations} conversations, ${user.counts.tasks} To Do tasks (${user.counts.completedTasks} done)`,
    `  shared with Google: "${m.subject}" on ${m.start} (iCalUID ${m.iCalUId}${m.sameICalUId ? '' : `; Outlook shows ${m.outlookICalUId}`})`,
    ...(user.sharedMessage ? [`  shared mail: ${user.sharedMessage.internetMessageId}`] : []),
  ];
}
