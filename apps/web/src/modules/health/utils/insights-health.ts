import type { Tone } from '../../../ui/StatusBadge';
import { formatDateTime } from '../../../ui/utils/time';
import { connectionName } from '../../connections/utils/connection-name';
import { connectionStatus } from '../../connections/utils/connection-status';
import { providerName } from '../../records/utils/format';
import { statusSubject } from './series';

/** The sync-health answer's `insights` block, as the API sends it. */
export interface InsightsBlock {
  completeUpTo: string | null;
  heldBy: { connectionId: string; watermark: string | null }[];
  late: number;
  sideOutput: number;
}

/** What the holders are looked up in: the health answer's connections (every one, disconnected too). */
type HolderConnection = Parameters<typeof statusSubject>[0] & {
  id: string;
  provider: string;
  displayName: string | null;
  externalAccountId: string;
  watermark: string | null;
};

export interface InsightsHolder {
  connectionId: string;
  name: string;
  provider: string;
  /** Its status as its card shows it; null once the connection was removed. */
  status: { label: string; tone: Tone } | null;
  /** "Dec 10, 2026, 09:30 AM", or that it has not reported a watermark yet. */
  watermark: string;
}

export interface InsightsHealth {
  /** "Dec 12, 2026, 08:00 AM", or that there is no watermark yet. */
  completeUpTo: string;
  holders: InsightsHolder[];
  late: { count: number; explanation: string };
  setAside: { count: number; explanation: string };
}

/** Said for a connection the watermark waits for that has never vouched for a time. */
export const NOT_REPORTED = 'has not reported yet';

/**
 * The page's "Activity insights": how far the figures are final, which connections hold that
 * back (named and in the status their cards show), and what came late. Pure, so tested alone.
 */
export function insightsHealth(
  insights: InsightsBlock,
  connections: readonly HolderConnection[],
  now: number = Date.now(),
): InsightsHealth {
  const byId = new Map(connections.map((c) => [c.id, c]));
  return {
    completeUpTo:
      insights.completeUpTo === null
        ? 'Not yet: every connected mailbox, calendar and CRM has to report once'
        : formatDateTime(insights.completeUpTo),
    holders: insights.heldBy.map((holder) => {
      const connection = byId.get(holder.connectionId);
      const watermark = holder.watermark === null ? NOT_REPORTED : formatDateTime(holder.watermark);
      if (connection === undefined)
        return {
          connectionId: holder.connectionId,
          name: 'Removed connection',
          provider: '—',
          status: null,
          watermark,
        };
      const status = connectionStatus(statusSubject(connection), connection, now);
      return {
        connectionId: holder.connectionId,
        name: connectionName(connection),
        provider: providerName(connection.provider),
        status: { label: status.label, tone: status.tone },
        watermark,
      };
    }),
    late: {
      count: insights.late,
      explanation: 'Activities that arrived after their day had closed; each revised that day’s figures.',
    },
    setAside: {
      count: insights.sideOutput,
      explanation:
        'Activities later than the allowed lateness: kept and counted here, they change no figures.',
    },
  };
}
