import { Badge, Button, Group, Paper, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { ErrorState } from '../../../ui/ErrorState';
import { LoadMore } from '../../../ui/LoadMore';
import { toneProps } from '../../../ui/StatusBadge';
import { formatDateTime } from '../../../ui/utils/time';
import { type Revision, revisionsQuery } from '../api';
import { describeSet, type PolicyEntity, type PolicyMap } from '../utils/policy-draft';

/** The type's saved sets, newest first; Restore puts one back in the form, to review and save. */
export function PolicyRevisions({
  entity,
  currentVersion,
  nameOf,
  onRestore,
}: {
  entity: PolicyEntity;
  currentVersion: number;
  nameOf: (source: string) => string;
  onRestore: (revision: Revision) => void;
}) {
  const list = useInfiniteQuery(revisionsQuery(entity));
  const revisions = list.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <Stack gap="sm" mt="lg" component="section" aria-labelledby="policy-revisions">
      <Title order={2} size="h4" id="policy-revisions">
        Revisions
      </Title>
      {list.isPending ? (
        <Skeleton height={60} role="status" aria-label="Loading revisions" />
      ) : list.isError && revisions.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : revisions.length === 0 ? (
        <Text size="sm" c="dimmed">
          Not changed yet: every field takes the latest edit. Each save is kept here, to restore.
        </Text>
      ) : (
        <>
          {revisions.map((revision) => {
            const who =
              revision.changedBy.label ?? `${revision.changedBy.kind} ${revision.changedBy.id.slice(0, 8)}`;
            return (
              <Paper key={revision.version} withBorder p="sm">
                <Group justify="space-between" align="flex-start" wrap="wrap" gap="xs">
                  <Stack gap={2} style={{ flex: '1 1 260px', minWidth: 0 }}>
                    <Group gap="xs">
                      <Text fw={500}>Version {revision.version}</Text>
                      {revision.version === currentVersion && (
                        <Badge size="sm" {...toneProps('success')}>
                          Current
                        </Badge>
                      )}
                    </Group>
                    <Text size="sm" c="dimmed">
                      {formatDateTime(revision.createdAt)} by {who}
                    </Text>
                    <Text size="sm">{describeSet(entity, revision.fields as PolicyMap, nameOf)}</Text>
                  </Stack>
                  {revision.version !== currentVersion && (
                    <Button size="xs" variant="default" onClick={() => onRestore(revision)}>
                      Restore version {revision.version}
                    </Button>
                  )}
                </Group>
              </Paper>
            );
          })}
          <LoadMore query={list} summary={<>{revisions.length} revisions</>} />
        </>
      )}
    </Stack>
  );
}
