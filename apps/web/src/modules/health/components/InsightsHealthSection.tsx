import { Paper, SimpleGrid, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import type { useQuery } from '@tanstack/react-query';
import { ErrorState } from '../../../ui/ErrorState';
import { StatusBadge } from '../../../ui/StatusBadge';
import type { HealthNow } from '../api';
import { insightsHealth } from '../utils/insights-health';

/** A count over its one-line meaning. */
function Count({ label, count, explanation }: { label: string; count: number; explanation: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" fw={600}>
        {count.toLocaleString('en')}
      </Text>
      <Text size="xs" c="dimmed">
        {explanation}
      </Text>
    </div>
  );
}

/**
 * How far the activity insights (last contacted, trends) are final: the workspace's watermark,
 * the connections it waits for, and the activities that came late or too late.
 */
export function InsightsHealthSection({ now }: { now: ReturnType<typeof useQuery<HealthNow>> }) {
  return (
    <Stack gap="sm" component="section" aria-labelledby="health-insights">
      <Title order={2} size="h3" id="health-insights">
        Activity insights
      </Title>
      {now.isPending ? (
        <Skeleton height={120} role="status" aria-busy="true" aria-label="Loading the activity insights" />
      ) : now.isError ? (
        <ErrorState error={now.error} onRetry={() => void now.refetch()} />
      ) : (
        <InsightsBody now={now.data} at={now.dataUpdatedAt || Date.now()} />
      )}
    </Stack>
  );
}

function InsightsBody({ now, at }: { now: HealthNow; at: number }) {
  const view = insightsHealth(now.insights, now.insightsHolders, at);
  return (
    <Paper withBorder p="md" radius="md" miw={0} style={{ overflowWrap: 'anywhere' }}>
      <Stack gap="md">
        <div>
          <Text size="xs" c="dimmed">
            Complete up to
          </Text>
          <Text size="sm" fw={600} data-testid="insights-complete-up-to">
            {view.completeUpTo}
          </Text>
          <Text size="xs" c="dimmed">
            Every connection has delivered its mails and meetings from before this time, so the figures up to
            it are final.
          </Text>
        </div>
        {view.holders.length === 0 ? (
          <Text size="sm">No connection holds it back.</Text>
        ) : (
          // On a phone the table scrolls within the page's column rather than widen the page.
          <Table.ScrollContainer minWidth={0} type="native">
            <Table
              verticalSpacing={4}
              horizontalSpacing={6}
              fz="sm"
              aria-label="Connections holding the activity insights back"
            >
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Held back by</Table.Th>
                  <Table.Th>Provider</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Its watermark</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {view.holders.map((holder) => (
                  <Table.Tr key={holder.connectionId}>
                    <Table.Th scope="row" fw={500}>
                      {holder.name}
                    </Table.Th>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{holder.provider}</Table.Td>
                    <Table.Td>
                      {holder.status === null ? (
                        '—'
                      ) : (
                        <StatusBadge label={holder.status.label} tone={holder.status.tone} />
                      )}
                    </Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{holder.watermark}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          <Count label="Late" count={view.late.count} explanation={view.late.explanation} />
          <Count label="Set aside" count={view.setAside.count} explanation={view.setAside.explanation} />
        </SimpleGrid>
      </Stack>
    </Paper>
  );
}
