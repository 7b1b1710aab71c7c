import { Badge, Code, Group, Pagination, SimpleGrid, Stack, Table, Tabs, Text } from '@mantine/core';
import { type ReactNode, useState } from 'react';
import { AnchorLink } from '../../../ui/AnchorLink';
import { toneProps } from '../../../ui/StatusBadge';
import { fieldLabel, isPolicyEntity } from '../../policies/utils/policy-draft';
import type { ReplayReport as Report } from '../api';
import { formatValue, pageOf } from '../utils/replay-view';

const PAGE_SIZE = 20;

interface RecordRef {
  entityId: string;
  entityType: string;
  displayName: string | null;
}

const RECORD_PATHS: Record<string, '/people/$id' | '/companies/$id' | '/deals/$id'> = {
  person: '/people/$id',
  company: '/companies/$id',
  deal: '/deals/$id',
};

/** The report of a finished replay: totals, then each list in its tab, a page at a time. */
export function ReplayReport({ report, nameOf }: { report: Report; nameOf: (source: string) => string }) {
  const [tab, setTab] = useState<string | null>('changes');
  const records = new Map<string, RecordRef>(
    [...report.changes, ...report.created, ...report.gone].map((r) => [r.entityId, r]),
  );
  const record = (entityId: string) => <RecordName id={entityId} known={records.get(entityId)} />;
  const { summary } = report;
  const fieldRows = report.changes.flatMap((change) =>
    Object.entries(change.fields).map(([field, value]) => ({ change, field, value })),
  );

  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="sm">
        <Total label="Records with field changes" value={summary.changes} />
        <Total label="Conflicts opened" value={summary.conflictsAppeared} />
        <Total label="Conflicts closed" value={summary.conflictsDisappeared} />
        <Total label="Writes owed" value={summary.writes} />
        <Total label="Records created" value={summary.created} />
        <Total label="Records gone" value={summary.gone} />
        <Total label="Links moved" value={summary.linksMoved} />
        <Total label="Events refused" value={summary.failures} />
      </SimpleGrid>
      <Text size="sm" c="dimmed">
        {report.scope.events.toLocaleString('en')} events of {report.scope.records.toLocaleString('en')}{' '}
        source records rebuilt into {report.scope.entities.toLocaleString('en')} records.
        {report.truncated && ' Long lists stop at 100 items; the totals above count them all.'}
      </Text>
      <Tabs value={tab} onChange={setTab} keepMounted={false} id="replay-report">
        <Tabs.List style={{ flexWrap: 'nowrap', overflowX: 'auto' }}>
          <Tabs.Tab value="changes">Field changes ({summary.changes})</Tabs.Tab>
          <Tabs.Tab value="conflicts">Conflicts ({report.conflicts.length})</Tabs.Tab>
          <Tabs.Tab value="links">Links ({summary.linksMoved})</Tabs.Tab>
          <Tabs.Tab value="writes">Writes owed ({summary.writes})</Tabs.Tab>
          <Tabs.Tab value="records">New and gone ({summary.created + summary.gone})</Tabs.Tab>
          {summary.failures > 0 && <Tabs.Tab value="failures">Refused ({summary.failures})</Tabs.Tab>}
        </Tabs.List>
        <Tabs.Panel value="changes" pt="sm">
          <Paged
            items={fieldRows}
            empty="No field value changes."
            caption="Field changes"
            head={['Record', 'Field', 'From', 'To', 'Comes from']}
            row={({ change, field, value }) => [
              record(change.entityId),
              labelOf(change.entityType, field),
              <Text key="from" size="sm" td="line-through" c="dimmed">
                {formatValue(value.from)}
              </Text>,
              <Text key="to" size="sm" fw={500}>
                {formatValue(value.to)}
              </Text>,
              value.source === null
                ? '—'
                : value.source.kind === 'connection'
                  ? nameOf(value.source.id)
                  : 'A person',
            ]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="conflicts" pt="sm">
          <Paged
            items={report.conflicts}
            empty="No conflict opens or closes."
            caption="Conflicts"
            head={['Record', 'Field', 'Policy', 'Change']}
            row={(c) => [
              record(c.entityId),
              labelOf(records.get(c.entityId)?.entityType ?? '', c.field),
              c.policy,
              <Badge key="change" size="sm" {...toneProps(c.change === 'appeared' ? 'warning' : 'neutral')}>
                {c.change === 'appeared' ? 'opens' : 'closes'}
              </Badge>,
            ]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="links" pt="sm">
          <Paged
            items={report.links}
            empty="No source record moves to another record."
            caption="Links"
            head={['Source', 'Record in it', 'From', 'To']}
            row={(l) => [
              nameOf(l.connectionId),
              `${l.entityType} ${l.externalId}`,
              l.from === null ? 'not linked' : record(l.from),
              l.to === null ? 'not linked' : record(l.to),
            ]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="writes" pt="sm">
          <Paged
            items={report.writes}
            empty="Nothing new is owed to the connected systems."
            caption="Writes owed"
            head={['To', 'Record', 'Operation', 'Values']}
            row={(w) => [
              nameOf(w.connectionId),
              record(w.entityId),
              w.op,
              <Text key="values" size="sm">
                {Object.entries(w.fields)
                  .map(([field, value]) => `${field}: ${formatValue(value)}`)
                  .join(', ')}
              </Text>,
            ]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="records" pt="sm">
          <Paged
            items={[
              ...report.created.map((r) => ({ r, what: 'created' })),
              ...report.gone.map((r) => ({ r, what: 'gone' })),
            ]}
            empty="No record is created or removed."
            caption="New and gone records"
            head={['Record', 'Type', 'Change']}
            row={({ r, what }) => [record(r.entityId), r.entityType, what]}
          />
        </Tabs.Panel>
        <Tabs.Panel value="failures" pt="sm">
          <Paged
            items={report.failures}
            empty="No event was refused."
            caption="Refused events"
            head={['Event', 'Record', 'Why']}
            row={(f) => [<Code key="key">{f.eventKey}</Code>, `${f.entityType} ${f.externalId}`, f.error]}
          />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

const labelOf = (entityType: string, field: string): string =>
  isPolicyEntity(entityType) ? fieldLabel(entityType, field) : field;

function Total({ label, value }: { label: string; value: number }) {
  return (
    <Stack gap={0}>
      <Text size="xl" fw={600}>
        {value.toLocaleString('en')}
      </Text>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
    </Stack>
  );
}

function RecordName({ id, known }: { id: string; known: RecordRef | undefined }) {
  const name = known?.displayName ?? `Record ${id.slice(0, 8)}`;
  const path = known ? RECORD_PATHS[known.entityType] : undefined;
  if (path === undefined) return <>{name}</>;
  return (
    <AnchorLink to={path} params={{ id }}>
      {name}
    </AnchorLink>
  );
}

function Paged<T>({
  items,
  empty,
  caption,
  head,
  row,
}: {
  items: readonly T[];
  empty: string;
  caption: string;
  head: string[];
  row: (item: T) => ReactNode[];
}) {
  const [page, setPage] = useState(1);
  if (items.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {empty}
      </Text>
    );
  const shown = pageOf(items, page, PAGE_SIZE);
  return (
    <Stack gap="sm">
      <Table.ScrollContainer minWidth={560}>
        <Table verticalSpacing="xs" aria-label={caption}>
          <Table.Thead>
            <Table.Tr>
              {head.map((h) => (
                <Table.Th key={h}>{h}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.items.map((item, index) => (
              <Table.Tr key={index}>
                {row(item).map((cell, column) => (
                  <Table.Td key={head[column]}>{cell}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {shown.pages > 1 && (
        <Group justify="center">
          <Pagination
            total={shown.pages}
            value={Math.min(page, shown.pages)}
            onChange={setPage}
            getControlProps={(control) => ({ 'aria-label': `${control} page` })}
            getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
          />
        </Group>
      )}
    </Stack>
  );
}
