import {
  Alert,
  Badge,
  Button,
  Group,
  Paper,
  Radio,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { newIdempotencyKey } from '../../api/client';
import { describeError } from '../../api/errors';
import { fieldLabel, fieldsOf } from '../../lib/fields';
import { AnchorLink } from '../../ui/AnchorLink';
import { ErrorState } from '../../ui/ErrorState';
import { StatusBadge, toneProps } from '../../ui/StatusBadge';
import { recordQuery } from '../records/api';
import { formatValue, providerName } from '../records/utils/format';
import {
  duplicateQuery,
  type MergeType,
  operationQuery,
  useDismissDuplicate,
  useMergeDuplicate,
} from './api';
import { showMergedNotification } from './components/undo-notification';
import { compareFields, suggestedSurvivor } from './utils/compare';
import { evidenceText } from './utils/evidence';

const ROUTE = { person: '/people/$id', company: '/companies/$id', deal: '/deals/$id' } as const;
type Side = 'a' | 'b';

/** Two records identity found alike: both side by side, the evidence, and the decision. */
export function DuplicateDetailPage({ id }: { id: string }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const pair = useQuery(duplicateQuery(id));
  const type = (pair.data?.entityType ?? 'person') as MergeType;
  const supported = pair.data !== undefined && pair.data.entityType in ROUTE;
  const a = useQuery({ ...recordQuery(type, pair.data?.a.id ?? ''), enabled: supported });
  const b = useQuery({ ...recordQuery(type, pair.data?.b.id ?? ''), enabled: supported });
  const [survivor, setSurvivor] = useState<Side | null>(null);
  const [following, setFollowing] = useState<string | null>(null);
  const keys = useRef(new Map<string, string>());
  const merge = useMergeDuplicate();
  const dismiss = useDismissDuplicate();
  const operation = useQuery({ ...operationQuery(following ?? ''), enabled: following !== null });

  const chosen: Side = survivor ?? (a.data && b.data ? suggestedSurvivor(a.data, b.data) : 'a');
  const records = { a: a.data, b: b.data };
  const kept = records[chosen];
  const absorbed = records[chosen === 'a' ? 'b' : 'a'];
  const names = `${a.data?.displayName ?? 'Unnamed'} and ${b.data?.displayName ?? 'Unnamed'}`;

  const finish = (operationId: string, survivorId: string) => {
    showMergedNotification(client, operationId, `${names} are one record now.`);
    void navigate({ to: ROUTE[type], params: { id: survivorId } });
  };

  // An accepted merge is followed until the sync stage applies it.
  useEffect(() => {
    const op = operation.data;
    if (following === null || op === undefined || op.status === 'pending') return;
    setFollowing(null);
    if (op.status === 'applied' && op.survivor !== null) finish(op.id, op.survivor.id);
  });

  if (pair.isPending)
    return (
      <Stack role="status" aria-busy="true" aria-label="Loading the pair">
        <Skeleton height={32} width="60%" />
        <Skeleton height={240} />
      </Stack>
    );
  if (pair.isError) return <ErrorState error={pair.error} onRetry={() => void pair.refetch()} />;

  const view = pair.data;
  const doMerge = () => {
    if (kept === undefined || absorbed === undefined) return;
    const intent = `${kept.id}:${absorbed.id}`;
    const idempotencyKey = keys.current.get(intent) ?? newIdempotencyKey();
    keys.current.set(intent, idempotencyKey);
    merge.mutate(
      { pairId: view.id, type, survivorId: kept.id, absorbedId: absorbed.id, idempotencyKey },
      {
        onSuccess: (outcome) => {
          if (outcome.applied) finish(outcome.operationId, kept.id);
          else setFollowing(outcome.operationId);
        },
      },
    );
  };

  const order = supported ? fieldsOf(type).map(([name]) => name) : [];
  const rows = a.data && b.data ? compareFields(a.data.fields, b.data.fields, order) : [];
  const merged = a.data !== undefined && b.data !== undefined && a.data.id === b.data.id;

  return (
    <Stack gap="md">
      <div>
        <AnchorLink to="/duplicates" size="sm">
          ← Possible duplicates
        </AnchorLink>
        <Title order={1}>Same {type === 'person' ? 'person' : type}?</Title>
        <Group gap="xs" mt={4}>
          <StatusBadge label={view.status} tone={view.status === 'open' ? 'warning' : 'neutral'} />
          <StatusBadge label={`${Math.round(view.score * 100)}% alike`} tone="info" />
        </Group>
      </div>

      <Paper withBorder p="sm" component="section" aria-labelledby="evidence-heading">
        <Title order={2} size="h5" id="evidence-heading">
          Why they look alike
        </Title>
        {view.evidence.length === 0 ? (
          <Text size="sm" c="dimmed">
            Similar names, with no shared address, phone or domain.
          </Text>
        ) : (
          <ul style={{ margin: 0, paddingInlineStart: 20 }}>
            {view.evidence.map((item, index) => (
              <li key={index}>
                <Text size="sm">{evidenceText(item)}</Text>
              </li>
            ))}
          </ul>
        )}
      </Paper>

      {!supported ? (
        <Alert color="gray" variant="outline">
          Pairs of this type are reviewed through the API.
        </Alert>
      ) : a.isError || b.isError ? (
        <ErrorState
          error={a.error ?? b.error}
          onRetry={() => {
            void a.refetch();
            void b.refetch();
          }}
        />
      ) : a.data === undefined || b.data === undefined ? (
        <Skeleton height={240} role="status" aria-label="Loading both records" />
      ) : (
        <>
          {merged && (
            <Alert color="blue" variant="outline" title="Already one record">
              These two have been merged since this pair was suggested.
            </Alert>
          )}
          <Radio.Group
            label="Keep which record?"
            description="The other one's systems and values move into it; a field both have is settled by its policy."
            value={chosen}
            onChange={(value) => setSurvivor(value as Side)}
          >
            <SimpleGrid cols={{ base: 1, sm: 2 }} mt="xs">
              {(['a', 'b'] as const).map((side) => {
                const record = records[side];
                if (record === undefined) return null;
                return (
                  <Paper key={side} withBorder p="sm">
                    <Radio
                      value={side}
                      label={
                        <Text fw={600} span>
                          Keep {record.displayName ?? 'Unnamed'}
                        </Text>
                      }
                    />
                    <Group gap={4} mt="xs">
                      {record.sourceLinks.map((link) => (
                        <Badge
                          key={`${link.connectionId}:${link.externalId}`}
                          size="xs"
                          {...toneProps('neutral')}
                          tt="none"
                        >
                          {providerName(link.provider)}
                        </Badge>
                      ))}
                    </Group>
                    <AnchorLink to={ROUTE[type]} params={{ id: record.id }} size="xs">
                      Open record
                    </AnchorLink>
                  </Paper>
                );
              })}
            </SimpleGrid>
          </Radio.Group>

          {/* Fixed columns that wrap, so a phone needs no scrolling region. */}
          <Table
            withTableBorder
            layout="fixed"
            style={{ overflowWrap: 'anywhere' }}
            aria-label="Fields of both records"
          >
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Field</Table.Th>
                <Table.Th scope="col">{a.data.displayName ?? 'First'}</Table.Th>
                <Table.Th scope="col">{b.data.displayName ?? 'Second'}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => (
                <Table.Tr key={row.field} bg={row.differs ? 'yellow.0' : undefined}>
                  <Table.Th scope="row" fw={500}>
                    {fieldLabel(type, row.field)}
                    {row.differs && (
                      <Badge ml={6} size="xs" {...toneProps('warning')}>
                        differs
                      </Badge>
                    )}
                  </Table.Th>
                  <Table.Td>{formatValue(type, row.field, row.a)}</Table.Td>
                  <Table.Td>{formatValue(type, row.field, row.b)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>

          {(merge.isError || dismiss.isError) && (
            <Alert
              color="red"
              variant="outline"
              role="alert"
              title={describeError(merge.error ?? dismiss.error).title}
            >
              {describeError(merge.error ?? dismiss.error).message}
            </Alert>
          )}
          {following !== null && (
            <Alert color="blue" variant="outline" role="status" title="Merging…">
              The merge is on its way; this page opens the record once it is applied.
            </Alert>
          )}
          {view.status === 'open' && !merged && (
            <Group justify="flex-end" gap="sm">
              <Button
                variant="default"
                loading={dismiss.isPending}
                onClick={() =>
                  dismiss.mutate(view.id, {
                    onSuccess: (pair) => {
                      // 202: on its way (the sync is behind); the pair leaves the queue once applied.
                      notifications.show(
                        pair.status === 'dismissed'
                          ? {
                              color: 'green',
                              title: 'Marked as different',
                              message: `${names} will not be suggested again.`,
                            }
                          : {
                              color: 'blue',
                              title: 'Marking as different',
                              message: `The sync is catching up: ${names} leave the queue in a moment.`,
                            },
                      );
                      void navigate({ to: '/duplicates' });
                    },
                  })
                }
              >
                Not the same
              </Button>
              {/* No confirmation: the merge can be undone from the notification that follows. */}
              <Button onClick={doMerge} loading={merge.isPending} disabled={following !== null}>
                Merge into {kept?.displayName ?? 'the kept record'}
              </Button>
            </Group>
          )}
        </>
      )}
    </Stack>
  );
}
