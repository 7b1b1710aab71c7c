import { Button, Card, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { ErrorState } from '../../../ui/ErrorState';
import { LoadMore } from '../../../ui/LoadMore';
import { formatDateTime, relativeTime } from '../../../ui/utils/time';
import { membersQuery, type Revision, revisionsQuery } from '../api';

function mappingsText(revision: Revision): string {
  return revision.mappings.length === 0
    ? 'Defaults only'
    : revision.mappings.map((m) => `${m.entityType}.${m.field} → ${m.property}`).join(', ');
}

/** Earlier versions of the mappings, newest first, each with Restore. */
export function RevisionsList({
  id,
  currentVersion,
  onRestore,
}: {
  id: string;
  currentVersion: number;
  onRestore: (revision: Revision) => void;
}) {
  const revisions = useInfiniteQuery(revisionsQuery(id));
  const members = useQuery(membersQuery());
  const who = (revision: Revision): string => {
    if (revision.changedBy.kind === 'apiKey') return 'an API key';
    const member = members.data?.data.find((m) => m.id === revision.changedBy.id);
    return member ? (member.name ?? member.email) : 'a member';
  };
  const rows = revisions.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack gap="sm" component="section" aria-labelledby="mapping-revisions">
      <Title order={2} size="h4" id="mapping-revisions">
        Revisions
      </Title>
      {revisions.isPending ? (
        <Skeleton height={60} />
      ) : revisions.isError && rows.length === 0 ? (
        <ErrorState error={revisions.error} onRetry={() => void revisions.refetch()} />
      ) : rows.length === 0 ? (
        <Text size="sm" c="dimmed">
          No revisions yet: these are the connector's defaults. Every save is kept here and can be restored.
        </Text>
      ) : (
        <>
          <Stack component="ul" gap="xs" p={0} m={0} style={{ listStyle: 'none' }} aria-label="Revisions">
            {rows.map((revision) => (
              <Card key={revision.version} component="li" withBorder padding="sm" radius="md">
                <Group justify="space-between" wrap="wrap" gap="xs">
                  <Stack gap={2} style={{ flex: '1 1 240px', minWidth: 0, overflowWrap: 'anywhere' }}>
                    <Text size="sm" fw={600}>
                      Version {revision.version}
                      {revision.version === currentVersion ? ' (current)' : ''}
                    </Text>
                    <Text size="xs" c="dimmed">
                      <time dateTime={revision.createdAt} title={formatDateTime(revision.createdAt)}>
                        {relativeTime(revision.createdAt)}
                      </time>{' '}
                      by {who(revision)}
                    </Text>
                    <Text size="sm">{mappingsText(revision)}</Text>
                  </Stack>
                  {revision.version !== currentVersion && (
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => onRestore(revision)}
                      aria-label={`Restore version ${revision.version}`}
                    >
                      Restore
                    </Button>
                  )}
                </Group>
              </Card>
            ))}
          </Stack>
          <LoadMore
            query={revisions}
            summary={rows.length === 1 ? '1 revision' : `${rows.length} revisions`}
          />
        </>
      )}
    </Stack>
  );
}
