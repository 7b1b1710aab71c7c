import { Badge, Card, Group, Stack, Tabs, Text, Title } from '@mantine/core';
import type { DataTableColumn } from 'mantine-datatable';
import { EmptyState } from '../../../ui/EmptyState';
import { StatusBadge } from '../../../ui/StatusBadge';
import type { DryRunReport, DryRunWrites } from '../api';
import { entityLabel, fieldName, fieldsLine, opCountWords, showValue, systemName } from '../utils/report';
import { REPORT_TABS, type ReportTab } from '../utils/tabs';
import { PagedTable } from './PagedTable';
import { RecordName } from './recordLink';
import { WaitingTargets } from './WaitingTargets';

type Link = DryRunReport['links'][number];
type Creation = DryRunReport['creations'][number];
type Conflict = DryRunReport['conflicts'][number];
type Duplicate = DryRunReport['possibleDuplicates'][number];
interface FieldChange {
  key: string;
  entityId: string;
  entityType: string;
  displayName: string | null;
  field: string;
  from: unknown;
  to: unknown;
}

const typeColumn = <T extends { entityType: string }>(): DataTableColumn<T> => ({
  accessor: 'entityType',
  title: 'Type',
  render: (row) => entityLabel(row.entityType),
});

const LINK_COLUMNS: DataTableColumn<Link>[] = [
  {
    accessor: 'displayName',
    title: 'Unified record',
    render: (row) => (
      <RecordName entityType={row.entityType} entityId={row.entityId} name={row.displayName} />
    ),
  },
  typeColumn<Link>(),
  { accessor: 'externalId', title: 'Its id in this account' },
];

type NameOf = (entityId: string) => string | null;

const duplicateColumns = (nameOf: NameOf): DataTableColumn<Duplicate>[] => [
  typeColumn<Duplicate>(),
  { accessor: 'score', title: 'Alike', render: (row) => `${Math.round(row.score * 100)}%` },
  {
    accessor: 'entityA',
    title: 'Records',
    render: (row) => (
      <Group gap="xs">
        <RecordName entityType={row.entityType} entityId={row.entityA} name={nameOf(row.entityA)} />
        <Text size="sm">and</Text>
        <RecordName entityType={row.entityType} entityId={row.entityB} name={nameOf(row.entityB)} />
      </Group>
    ),
  },
];

const CREATION_COLUMNS: DataTableColumn<Creation>[] = [
  { accessor: 'displayName', title: 'New record', render: (row) => row.displayName ?? 'Unnamed' },
  typeColumn<Creation>(),
  {
    accessor: 'fields',
    title: 'Fields',
    render: (row) => <Text size="sm">{fieldsLine(row.entityType, row.fields)}</Text>,
  },
];

const CHANGE_COLUMNS: DataTableColumn<FieldChange>[] = [
  {
    accessor: 'displayName',
    title: 'Record',
    render: (row) => (
      <RecordName entityType={row.entityType} entityId={row.entityId} name={row.displayName} />
    ),
  },
  typeColumn<FieldChange>(),
  { accessor: 'field', title: 'Field', render: (row) => fieldName(row.entityType, row.field) },
  { accessor: 'from', title: 'Now', render: (row) => showValue(row.from) },
  {
    accessor: 'to',
    title: 'After enabling',
    render: (row) => (
      <Text fw={600} size="sm">
        {showValue(row.to)}
      </Text>
    ),
  },
];

const conflictColumns = (nameOf: NameOf): DataTableColumn<Conflict>[] => [
  {
    accessor: 'entityId',
    title: 'Record',
    render: (row) => (
      <RecordName entityType={row.entityType} entityId={row.entityId} name={nameOf(row.entityId)} />
    ),
  },
  { accessor: 'field', title: 'Field', render: (row) => fieldName(row.entityType, row.field) },
  {
    accessor: 'candidates',
    title: 'Values',
    render: (row) => row.candidates.map((c) => showValue(c.value)).join(' vs '),
  },
  { accessor: 'policy', title: 'Policy' },
  {
    accessor: 'status',
    title: 'Outcome',
    render: (row) =>
      row.status === 'open' ? (
        <StatusBadge label="Waits in the inbox" tone="warning" />
      ) : (
        <Text size="sm">Settled: {showValue(row.winner?.value)}</Text>
      ),
  },
];

/** One row per field that would change. */
function flattenChanges(changes: DryRunReport['changes']): FieldChange[] {
  return changes.flatMap((change) =>
    Object.entries(change.fields).map(([field, { from, to }]) => ({
      key: `${change.entityId}.${field}`,
      entityId: change.entityId,
      entityType: change.entityType,
      displayName: change.displayName,
      field,
      from,
      to,
    })),
  );
}

type Sample = DryRunWrites['sample'][number] & { key: string };
const SAMPLE_COLUMNS: DataTableColumn<Sample>[] = [
  { accessor: 'op', title: 'Operation' },
  typeColumn<Sample>(),
  { accessor: 'externalId', title: 'Its id there', render: (row) => row.externalId ?? 'new' },
  {
    accessor: 'fields',
    title: 'Fields',
    render: (row) => <Text size="sm">{fieldsLine(row.entityType, row.fields)}</Text>,
  },
];

function SystemWrites({ writes }: { writes: DryRunWrites }) {
  const name = systemName(writes);
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-label={`Writes to ${name}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Group gap="xs">
            <Title order={3} size="h5">
              {name}
            </Title>
            {writes.self && (
              <Badge variant="light" c="dark.7">
                this connection
              </Badge>
            )}
          </Group>
          <Text size="sm">{opCountWords(writes.counts)}</Text>
        </Group>
        {writes.sample.length > 0 && (
          <PagedTable
            label={`A sample of the writes to ${name}`}
            records={writes.sample.map((s, i) => ({ ...s, key: `${s.op}.${s.entityId}.${i}` }))}
            columns={SAMPLE_COLUMNS}
            idOf={(row) => row.key}
          />
        )}
      </Stack>
    </Card>
  );
}

export function ReportTabs({
  report,
  tab,
  onTabChange,
}: {
  report: DryRunReport;
  tab: ReportTab;
  onTabChange: (tab: ReportTab) => void;
}) {
  const { summary } = report;
  const changes = flattenChanges(report.changes);
  const names = new Map<string, string | null>();
  for (const r of [...report.links, ...report.creations, ...report.changes])
    names.set(r.entityId, r.displayName);
  const nameOf: NameOf = (entityId) => names.get(entityId) ?? null;
  const writes = [...report.writes].sort((a, b) => Number(b.self) - Number(a.self));
  const label: Record<ReportTab, string> = {
    links: `Links (${summary.links})`,
    creations: `New records (${summary.creations})`,
    changes: `Field changes (${summary.changes})`,
    conflicts: `Conflicts (${summary.conflicts})`,
    writes: `Writes (${summary.writes})`,
  };
  return (
    <Tabs
      value={tab}
      onChange={(value) => value !== null && onTabChange(value as ReportTab)}
      keepMounted={false}
    >
      <Tabs.List style={{ flexWrap: 'nowrap', overflowX: 'auto' }}>
        {REPORT_TABS.map((value) => (
          <Tabs.Tab key={value} value={value}>
            {label[value]}
          </Tabs.Tab>
        ))}
      </Tabs.List>
      <Tabs.Panel value="links" pt="md">
        <Stack gap="md">
          <Text size="sm" c="dimmed">
            Records of this account that match a record Syncline already has: they would be linked and kept in
            step.
          </Text>
          {report.links.length === 0 ? (
            <EmptyState title="No links">None of its records matches a record already synced.</EmptyState>
          ) : (
            <PagedTable
              label="Records that would be linked"
              records={report.links}
              columns={LINK_COLUMNS}
              idOf={(row) => `${row.entityType}.${row.externalId}`}
            />
          )}
          {report.possibleDuplicates.length > 0 && (
            <Stack gap="xs">
              <Title order={3} size="h5">
                Left for review ({summary.possibleDuplicates})
              </Title>
              <Text size="sm" c="dimmed">
                Alike but not sure enough to link: each becomes a record of its own and waits under Possible
                duplicates for a person to decide.
              </Text>
              <PagedTable
                label="Possible duplicates it would leave for review"
                records={report.possibleDuplicates}
                columns={duplicateColumns(nameOf)}
                idOf={(row) => row.id}
              />
            </Stack>
          )}
        </Stack>
      </Tabs.Panel>
      <Tabs.Panel value="creations" pt="md">
        {report.creations.length === 0 ? (
          <EmptyState title="No new records">
            {report.complete
              ? 'Every record it holds matches one Syncline already has.'
              : 'New records are counted once its backfill has finished.'}
          </EmptyState>
        ) : (
          <PagedTable
            label="Records that would be created"
            records={report.creations}
            columns={CREATION_COLUMNS}
            idOf={(row) => row.entityId}
          />
        )}
      </Tabs.Panel>
      <Tabs.Panel value="changes" pt="md">
        {changes.length === 0 ? (
          <EmptyState title="No field changes">No value of a record already synced would change.</EmptyState>
        ) : (
          <PagedTable
            label="Fields that would change"
            records={changes}
            columns={CHANGE_COLUMNS}
            idOf={(row) => row.key}
          />
        )}
      </Tabs.Panel>
      <Tabs.Panel value="conflicts" pt="md">
        {report.conflicts.length === 0 ? (
          <EmptyState title="No conflicts">
            Its values agree with, or plainly follow, what the other systems hold.
          </EmptyState>
        ) : (
          <PagedTable
            label="Conflicts it would raise"
            records={report.conflicts}
            columns={conflictColumns(nameOf)}
            idOf={(row) => row.id}
          />
        )}
      </Tabs.Panel>
      <Tabs.Panel value="writes" pt="md">
        <WaitingTargets report={report} />
        {writes.every((w) => w.total === 0) ? (
          <EmptyState title="No writes">Enabling it would write nothing to any system.</EmptyState>
        ) : (
          <Stack gap="md">
            <Text size="sm" c="dimmed">
              What each system would be written once it is enabled, with a sample of each kind of write.
            </Text>
            {writes
              .filter((w) => w.total > 0)
              .map((w) => (
                <SystemWrites key={w.connectionId} writes={w} />
              ))}
          </Stack>
        )}
      </Tabs.Panel>
    </Tabs>
  );
}
