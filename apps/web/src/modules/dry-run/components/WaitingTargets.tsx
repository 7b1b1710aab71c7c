import { Alert, List, Text } from '@mantine/core';
import type { DryRunReport } from '../api';
import { waitingLine } from '../utils/report';

/**
 * Systems owed no creates yet (on their first sync, paused, awaiting credentials): the records
 * they lack are decided once they are live, so the counts above leave them out.
 */
export function WaitingTargets({ report }: { report: DryRunReport }) {
  if (report.waitingTargets.length === 0) return null;
  return (
    <Alert color="blue" variant="light" title="Not counted yet" aria-label="Systems not counted yet">
      <Text size="sm">
        The records these systems lack are decided once they are live and their first sync is done, so the
        writes here leave out what they would be sent:
      </Text>
      <List size="sm">
        {report.waitingTargets.map((t) => (
          <List.Item key={t.connectionId}>{waitingLine(t)}</List.Item>
        ))}
      </List>
    </Alert>
  );
}
