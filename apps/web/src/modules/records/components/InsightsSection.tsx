import { Badge, Paper, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorState } from '../../../ui/ErrorState';
import { type Tone, toneProps } from '../../../ui/StatusBadge';
import { type InsightCounts, insightsQuery, type PersonInsights } from '../api';
import {
  completeness,
  lastContactedWords,
  provenanceWords,
  replyWords,
  TREND_LABEL,
  TREND_RULE,
  whenWords,
  zoneWords,
} from '../utils/insights';

const TREND_TONE: Record<PersonInsights['trend'], Tone> = {
  warming: 'success',
  steady: 'neutral',
  cooling: 'warning',
  cold: 'info',
};

const WINDOWS = [
  { key: 'last7', label: '7 days' },
  { key: 'last30', label: '30 days' },
  { key: 'last90', label: '90 days' },
] as const satisfies readonly { key: keyof PersonInsights; label: string }[];

const KINDS: readonly { key: keyof InsightCounts; label: string }[] = [
  { key: 'mailsIn', label: 'Mails in' },
  { key: 'mailsOut', label: 'Mails out' },
  { key: 'meetings', label: 'Meetings' },
];

/** A label over its value (a term of the section's description list), as the eye scans down. */
function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text component="dt" size="xs" fw={600} c="dimmed">
        {label}
      </Text>
      <Text component="dd" size="sm" m={0}>
        {children}
      </Text>
    </div>
  );
}

/** Mails in, mails out and meetings over 7, 30 and 90 days: one row per kind, one column per window. */
function EngagementTable({ insights }: { insights: PersonInsights }) {
  // On a phone the column is about 300 px: the table scrolls within it rather than widen the page.
  return (
    <Table.ScrollContainer minWidth={0} type="native">
      <Table verticalSpacing={4} horizontalSpacing={6} fz="sm" aria-label="Engagement over 7, 30 and 90 days">
        <Table.Thead>
          <Table.Tr>
            {/* The corner: rows are named by their kind, columns by their window, the table by its label. */}
            <Table.Td />
            {WINDOWS.map(({ key, label }) => (
              <Table.Th key={key} ta="right" style={{ whiteSpace: 'nowrap' }}>
                {label}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {KINDS.map(({ key, label }) => (
            <Table.Tr key={key}>
              <Table.Th scope="row" fw={400}>
                {label}
              </Table.Th>
              {WINDOWS.map((window) => (
                <Table.Td key={window.key} ta="right">
                  {insights[window.key][key]}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** Why the recent days may still change: the workspace's watermark and the connections it waits for. */
function Completeness({ insights }: { insights: PersonInsights }) {
  const { headline, waiting } = completeness(insights);
  return (
    <Stack gap={2}>
      <Text size="xs" c="dimmed">
        {headline} · {zoneWords(insights.timeZone)}
      </Text>
      {waiting.length > 0 && (
        <Stack component="ul" gap={0} p={0} m={0} aria-label="Waiting for">
          {waiting.map((line) => (
            <Text component="li" key={line} size="xs" c="dimmed" style={{ listStyle: 'none' }}>
              {line}
            </Text>
          ))}
        </Stack>
      )}
    </Stack>
  );
}

function InsightsBody({ insights }: { insights: PersonInsights }) {
  const replies = replyWords(insights);
  return (
    <Stack gap="sm">
      <Stack component="dl" gap="sm" m={0}>
        <Fact label="Last contacted">{lastContactedWords(insights)}</Fact>
        <Fact label="Next meeting">
          {insights.nextMeetingAt === null ? 'None scheduled' : whenWords(insights.nextMeetingAt)}
        </Fact>
        <Fact label="Trend">
          <Badge size="sm" {...toneProps(TREND_TONE[insights.trend])}>
            {TREND_LABEL[insights.trend]}
          </Badge>
          <Text component="span" display="block" size="xs" c="dimmed" mt={2}>
            {TREND_RULE}
          </Text>
        </Fact>
        {replies !== null && <Fact label="Reply time, 90 days">{replies}</Fact>}
      </Stack>
      <EngagementTable insights={insights} />
      <Text size="xs" c="dimmed">
        {provenanceWords(insights)}
      </Text>
      <Completeness insights={insights} />
    </Stack>
  );
}

/**
 * A person's activity at a glance: last contact, next meeting, engagement and its trend,
 * computed by Syncline (read-only) and as final as the workspace's watermark.
 */
export function InsightsSection({ id }: { id: string }) {
  const query = useQuery({
    ...insightsQuery(id),
    // The stream announces no watermark: until the first one, ask again so the figures appear.
    refetchInterval: (q) => (q.state.data?.completeUpTo === null ? 10_000 : false),
  });
  return (
    <Paper
      withBorder
      p="md"
      component="section"
      aria-labelledby="insights-title"
      miw={0}
      style={{ overflowWrap: 'anywhere' }}
    >
      <Title order={2} size="h4" id="insights-title" mb="xs">
        Activity
      </Title>
      {query.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading the activity">
          {[0, 1, 2, 3].map((n) => (
            <Skeleton key={n} height={32} />
          ))}
        </Stack>
      ) : query.isError ? (
        <ErrorState error={query.error} onRetry={() => void query.refetch()} />
      ) : (
        <InsightsBody insights={query.data} />
      )}
    </Paper>
  );
}
