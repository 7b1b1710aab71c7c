import { Badge, Button, Group, Skeleton, Stack, Text, Title, Tooltip } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { DataTable, type DataTableColumn } from 'mantine-datatable';
import { useMemo } from 'react';
import { FIELDS } from '../../lib/fields';
import { AnchorLink } from '../../ui/AnchorLink';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import { toneProps } from '../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../ui/utils/time';
import { providerName } from '../records/utils/format';
import { type ListType, listQuery } from './api';
import { ListFilters } from './components/ListFilters';
import { lastContactedCell, type RowInsights } from './utils/last-contacted';
import { type ListSearch, sourceProviders } from './utils/list-search';

type Row = {
  id: string;
  displayName: string | null;
  fields: Record<string, unknown>;
  sourceLinks: { provider: string | null }[];
  updatedAt: string;
  insights: RowInsights | null;
};

/** When they were last in touch, relative, and the trend as a badge; the exact time on hover. */
function LastContacted({ row }: { row: Row }) {
  const cell = lastContactedCell(row.insights);
  const text = (
    <Text span size="sm" style={{ whiteSpace: 'nowrap' }}>
      {cell.text}
    </Text>
  );
  // The trend under the time: side by side, a narrow column cut the badge's word short.
  return (
    <Stack gap={2} align="flex-start">
      {cell.detail === null ? text : <Tooltip label={cell.detail}>{text}</Tooltip>}
      <Badge size="xs" style={{ flexShrink: 0 }} {...toneProps(cell.trend.tone)}>
        {cell.trend.label}
      </Badge>
    </Stack>
  );
}

const VIEW = {
  person: {
    title: 'People',
    path: '/people/$id',
    contact: 'email',
    contactLabel: 'Email',
    stage: 'lifecycleStage',
    stageLabel: 'Lifecycle stage',
  },
  company: {
    title: 'Companies',
    path: '/companies/$id',
    contact: 'domain',
    contactLabel: 'Domain',
    stage: null,
    stageLabel: 'Stage',
  },
  deal: {
    title: 'Deals',
    path: '/deals/$id',
    contact: 'amount',
    contactLabel: 'Amount',
    stage: 'stage',
    stageLabel: 'Stage',
  },
} as const;

const show = (value: unknown): string =>
  value === null || value === undefined || value === ''
    ? '—'
    : typeof value === 'number'
      ? value.toLocaleString()
      : String(value);

export function ListPage({
  type,
  search,
  onSearchChange,
}: {
  type: ListType;
  search: ListSearch;
  onSearchChange: (next: ListSearch) => void;
}) {
  const view = VIEW[type];
  const navigate = useNavigate();
  const wide = useMediaQuery('(min-width: 48em)', true);
  const list = useInfiniteQuery(listQuery(type, search));
  const rows = useMemo(() => (list.data?.pages.flatMap((page) => page.data) ?? []) as Row[], [list.data]);
  const filtered = Object.keys(search).some((key) => key !== 'sort');

  const columns: DataTableColumn<Row>[] = [
    {
      accessor: 'displayName',
      title: 'Name',
      render: (row) => (
        <AnchorLink
          to={view.path}
          params={{ id: row.id }}
          size="sm"
          fw={500}
          onClick={(event: React.MouseEvent) => event.stopPropagation()}
        >
          {row.displayName ?? 'Unnamed'}
        </AnchorLink>
      ),
    },
    {
      accessor: `fields.${view.contact}`,
      title: view.contactLabel,
      render: (row) => show(row.fields[view.contact]),
    },
    ...(view.stage === null
      ? []
      : [
          {
            accessor: `fields.${view.stage}`,
            title: view.stageLabel,
            render: (row: Row) => show(row.fields[view.stage]),
          },
        ]),
    ...(wide
      ? [
          { accessor: 'fields.ownerId', title: 'Owner', render: (row: Row) => show(row.fields.ownerId) },
          {
            accessor: 'sourceLinks',
            title: 'Sources',
            render: (row: Row) => (
              <Group gap={4}>
                {sourceProviders(row.sourceLinks).map((provider) => (
                  <Badge key={provider} size="xs" variant="light" color="gray" c="gray.9" tt="none">
                    {providerName(provider)}
                  </Badge>
                ))}
              </Group>
            ),
          },
        ]
      : []),
    {
      accessor: 'insights.lastContactedAt',
      title: 'Last contacted',
      render: (row) => <LastContacted row={row} />,
    },
    {
      accessor: 'updatedAt',
      title: 'Updated',
      render: (row) => (
        <Tooltip label={formatDateTime(row.updatedAt)}>
          <Text span size="sm">
            {relativeTime(row.updatedAt)}
          </Text>
        </Tooltip>
      ),
    },
  ];

  return (
    <Stack gap="md">
      <Title order={1}>{view.title}</Title>
      <ListFilters
        search={search}
        withStage={view.stage !== null}
        stageLabel={view.stageLabel}
        stageSuggestions={type === 'person' ? FIELDS.person.lifecycleStage.suggestions : undefined}
        onChange={onSearchChange}
      />
      {list.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label={`Loading ${view.title.toLowerCase()}`}>
          {Array.from({ length: 8 }, (_, i) => (
            <Skeleton key={i} height={34} />
          ))}
        </Stack>
      ) : list.isError && rows.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : rows.length === 0 ? (
        <EmptyState
          title={
            filtered
              ? `No ${view.title.toLowerCase()} match these filters`
              : `No ${view.title.toLowerCase()} yet`
          }
        >
          {filtered ? (
            <Button variant="subtle" onClick={() => onSearchChange(search.sort ? { sort: search.sort } : {})}>
              Clear filters
            </Button>
          ) : (
            'Records appear here once a connected CRM or Google account has synced them.'
          )}
        </EmptyState>
      ) : (
        <>
          <DataTable<Row>
            aria-label={view.title}
            withTableBorder
            borderRadius="md"
            highlightOnHover
            records={rows}
            columns={columns}
            idAccessor="id"
            fetching={list.isRefetching && !list.isFetchingNextPage}
            onRowClick={({ record }) => void navigate({ to: view.path, params: { id: record.id } })}
          />
          {list.isError && <ErrorState error={list.error} onRetry={() => void list.fetchNextPage()} />}
          <LoadMore
            query={list}
            summary={
              <>
                {rows.length} {rows.length === 1 ? 'record' : 'records'}, all shown
              </>
            }
          />
        </>
      )}
    </Stack>
  );
}
