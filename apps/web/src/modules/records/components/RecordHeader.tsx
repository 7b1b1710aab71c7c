import { Alert, Anchor, Badge, Group, List, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { formatDateTime } from '../../../ui/utils/time';
import type { RecordType, RecordView } from '../api';
import {
  CALLOUT_STYLES,
  linkedBecauseWords,
  providerFamily,
  providerName,
  TYPE_LABEL,
} from '../utils/format';

/** Name, type, the systems the record is made of (with why and a link to each), and open conflicts. */
export function RecordHeader({ type, record }: { type: RecordType; record: RecordView }) {
  const conflicts = record.openConflicts.length;
  return (
    <Stack gap="sm">
      <Group gap="sm" align="center" wrap="wrap">
        <Title order={1} size="h2" style={{ overflowWrap: 'anywhere' }}>
          {record.displayName ?? `Unnamed ${TYPE_LABEL[type].toLowerCase()}`}
        </Title>
        <Badge variant="light" color="gray" c="gray.9" tt="none">
          {TYPE_LABEL[type]}
        </Badge>
      </Group>

      <section aria-label="Sources">
        {record.sourceLinks.length === 0 ? (
          <Text size="sm" c="dimmed">
            No connected system holds this record.
          </Text>
        ) : (
          <List spacing={4} size="sm" listStyleType="none" ml={0} pl={0}>
            {record.sourceLinks.map((link) => (
              <List.Item key={`${link.connectionId}:${link.externalId}`}>
                <Group gap="xs" wrap="wrap">
                  <Text size="sm" fw={600}>
                    {providerName(link.provider)}
                  </Text>
                  <Text size="sm" c="dimmed">
                    {link.externalId}
                  </Text>
                  {link.url !== null && (
                    <Anchor href={link.url} target="_blank" rel="noopener noreferrer" size="sm">
                      Open in {providerFamily(link.provider)}
                    </Anchor>
                  )}
                </Group>
                <Text size="xs" c="dimmed">
                  {linkedBecauseWords(link.linkedBecause)}
                </Text>
              </List.Item>
            ))}
          </List>
        )}
        {record.deletedIn.map((deleted) => (
          <Text key={deleted.connectionId} size="xs" c="dimmed">
            Deleted in {deleted.name ?? providerName(deleted.provider)} on {formatDateTime(deleted.at)}; kept
            here and in the other systems.
          </Text>
        ))}
      </section>

      {conflicts > 0 && (
        <Alert color="orange" variant="light" title="Open conflicts" role="note" styles={CALLOUT_STYLES}>
          <Text size="sm">
            {conflicts === 1 ? 'One field has' : `${conflicts} fields have`} values that disagree and wait for
            a decision.{' '}
            <Anchor href="#open-conflicts" size="sm" c="blue.9">
              Decide here
            </Anchor>{' '}
            or in the{' '}
            <Anchor component={Link} to="/conflicts" size="sm" c="blue.9">
              conflicts inbox
            </Anchor>
            .
          </Text>
        </Alert>
      )}
    </Stack>
  );
}
