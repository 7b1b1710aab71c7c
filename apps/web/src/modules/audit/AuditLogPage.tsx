import {
  Badge,
  Button,
  Code,
  Group,
  List,
  Select,
  Skeleton,
  Stack,
  Text,
  Title,
  Tooltip,
} from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { DataTable, type DataTableColumn } from 'mantine-datatable';
import { useMemo, useState } from 'react';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import { toneProps } from '../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../ui/utils/time';
import { type AuditEntry, auditActorsQuery, auditLogQuery } from './api';
import {
  ACTION_GROUPS,
  ACTION_LABELS,
  type AuditAction,
  type AuditSearch,
  actionLabel,
  actorValue,
  detailLines,
} from './utils/audit-search';

const TARGET_WORDS: Record<string, string> = {
  connection: 'Connection',
  dead_letter: 'Dead letter',
  field_policy: 'Policy',
  replay: 'Replay',
  member: 'Member',
  api_key: 'API key',
};

const ACTION_OPTIONS = Object.entries(ACTION_GROUPS).map(([prefix, group]) => ({
  group,
  items: (Object.keys(ACTION_LABELS) as AuditAction[])
    .filter((action) => action.startsWith(`${prefix}.`))
    .map((action) => ({ value: action, label: ACTION_LABELS[action] })),
}));

function actorName(entry: AuditEntry): string {
  return (
    entry.actor.label ??
    `${entry.actor.kind === 'apiKey' ? 'API key' : 'member'} ${entry.actor.id.slice(0, 8)}`
  );
}

function target(entry: AuditEntry): string {
  const word = TARGET_WORDS[entry.targetType] ?? entry.targetType;
  const named = entry.details.email ?? entry.details.name;
  if (typeof named === 'string') return `${word} ${named}`;
  if (entry.targetType === 'field_policy' && entry.targetId !== null) return `${word} ${entry.targetId}`;
  return entry.targetId === null ? word : `${word} ${entry.targetId.slice(0, 8)}`;
}

/** Who did what to which connection, policy, letter, member or key, newest first. */
export function AuditLogPage({
  search,
  onSearchChange,
}: {
  search: AuditSearch;
  onSearchChange: (next: AuditSearch) => void;
}) {
  const wide = useMediaQuery('(min-width: 48em)', true);
  const list = useInfiniteQuery(auditLogQuery(search));
  const actors = useQuery(auditActorsQuery);
  const [expanded, setExpanded] = useState<string[]>([]);
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.data) ?? [], [list.data]);
  const filtered = search.action !== undefined || search.actor !== undefined;

  const actorOptions = [
    {
      group: 'Members',
      items: (actors.data?.members ?? []).map((m) => ({
        value: actorValue('member', m.id),
        label: m.name ?? m.email,
      })),
    },
    {
      group: 'API keys',
      items: (actors.data?.keys ?? []).map((k) => ({
        value: actorValue('apiKey', k.id),
        label: `${k.name}${k.revokedAt === null ? '' : ' (revoked)'}`,
      })),
    },
  ].filter((group) => group.items.length > 0);
  // An actor in the URL that the lists no longer hold (a removed member) still shows as chosen.
  if (search.actor !== undefined && !actorOptions.some((g) => g.items.some((i) => i.value === search.actor)))
    actorOptions.push({ group: 'Other', items: [{ value: search.actor, label: 'The actor in the link' }] });

  const toggle = (id: string) =>
    setExpanded((current) => (current.includes(id) ? current.filter((one) => one !== id) : [...current, id]));

  const columns: DataTableColumn<AuditEntry>[] = [
    {
      accessor: 'createdAt',
      title: 'Time',
      render: (entry) => (
        <Tooltip label={formatDateTime(entry.createdAt)}>
          <Text span size="sm">
            {relativeTime(entry.createdAt)}
          </Text>
        </Tooltip>
      ),
    },
    {
      accessor: 'actor',
      title: 'Actor',
      render: (entry) => (
        <Group gap={4} wrap="nowrap">
          <Text span size="sm">
            {actorName(entry)}
          </Text>
          {entry.actor.kind === 'apiKey' && (
            <Badge size="xs" tt="none" {...toneProps('neutral')}>
              key
            </Badge>
          )}
        </Group>
      ),
    },
    {
      accessor: 'action',
      title: 'Action',
      render: (entry) => (
        <Text span size="sm" fw={500}>
          {actionLabel(entry.action)}
        </Text>
      ),
    },
    ...(wide
      ? [
          {
            accessor: 'targetId',
            title: 'Target',
            render: (entry: AuditEntry) => (
              <Text span size="sm" style={{ overflowWrap: 'anywhere' }}>
                {target(entry)}
              </Text>
            ),
          },
        ]
      : []),
    {
      accessor: 'id',
      title: 'Details',
      textAlign: 'right',
      render: (entry) => (
        <Button
          size="compact-xs"
          variant="default"
          aria-expanded={expanded.includes(entry.id)}
          aria-label={`${expanded.includes(entry.id) ? 'Hide' : 'Show'} details of ${actionLabel(entry.action)}, ${relativeTime(entry.createdAt)}`}
          onClick={() => toggle(entry.id)}
        >
          {expanded.includes(entry.id) ? 'Hide' : 'Show'}
        </Button>
      ),
    },
  ];

  return (
    <Stack gap="md">
      <div>
        <Title order={1}>Audit log</Title>
        <Text c="dimmed" size="sm">
          Every admin action of the workspace: who (a member or an API key), what, and to which connection,
          policy, dead letter, member or key.
        </Text>
      </div>
      <Group gap="sm" align="flex-end" wrap="wrap">
        <Select
          label="Actor"
          placeholder="Anyone"
          data={actorOptions}
          value={search.actor ?? null}
          clearable
          searchable
          nothingFoundMessage="Nobody by that name"
          onChange={(value) => {
            const { actor: _, ...rest } = search;
            onSearchChange(value === null ? rest : { ...rest, actor: value });
          }}
          w={260}
          maw="100%"
        />
        <Select
          label="Action"
          placeholder="Every action"
          data={ACTION_OPTIONS}
          value={search.action ?? null}
          clearable
          searchable
          nothingFoundMessage="No such action"
          onChange={(value) => {
            const { action: _, ...rest } = search;
            onSearchChange(value === null ? rest : { ...rest, action: value as AuditAction });
          }}
          w={260}
          maw="100%"
        />
      </Group>
      {list.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading the audit log">
          {Array.from({ length: 8 }, (_, i) => (
            <Skeleton key={i} height={34} />
          ))}
        </Stack>
      ) : list.isError && rows.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : rows.length === 0 ? (
        <EmptyState title={filtered ? 'No entries match these filters' : 'Nothing recorded yet'}>
          {filtered ? (
            <Button variant="default" onClick={() => onSearchChange({})}>
              Clear filters
            </Button>
          ) : (
            'Connecting a system, changing a policy, settling a dead letter or managing members and keys is recorded here.'
          )}
        </EmptyState>
      ) : (
        <>
          <DataTable<AuditEntry>
            aria-label="Audit log"
            withTableBorder
            borderRadius="md"
            records={rows}
            columns={columns}
            idAccessor="id"
            fetching={list.isRefetching && !list.isFetchingNextPage}
            rowExpansion={{
              trigger: 'never',
              allowMultiple: true,
              expanded: {
                recordIds: expanded,
                onRecordIdsChange: (ids: unknown[]) => setExpanded(ids as string[]),
              },
              content: ({ record }) => (
                <Stack gap={4} p="sm">
                  {!wide && <Text size="sm">{target(record)}</Text>}
                  {detailLines(record.details).length > 0 ? (
                    <List size="sm" spacing={2}>
                      {detailLines(record.details).map((line) => (
                        <List.Item key={line}>{line}</List.Item>
                      ))}
                    </List>
                  ) : (
                    <Text size="sm" c="dimmed">
                      No details recorded.
                    </Text>
                  )}
                  <Text size="xs" c="dimmed">
                    {formatDateTime(record.createdAt)} · <Code>{record.action}</Code> ·{' '}
                    {record.targetId === null ? 'no target' : `target ${record.targetId}`}
                    {record.actor.keyId !== null && record.actor.userId !== null
                      ? ' · through a key of a member'
                      : ''}
                  </Text>
                </Stack>
              ),
            }}
          />
          {list.isError && <ErrorState error={list.error} onRetry={() => void list.fetchNextPage()} />}
          <LoadMore
            query={list}
            summary={
              <>
                {rows.length} {rows.length === 1 ? 'entry' : 'entries'}, all shown
              </>
            }
          />
        </>
      )}
    </Stack>
  );
}
