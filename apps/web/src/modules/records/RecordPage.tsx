import { Alert, Button, Grid, Group, Paper, Skeleton, Stack, Tabs, Text, Title } from '@mantine/core';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useCallback, useEffect, useMemo } from 'react';
import { fieldLabel, fieldsOf, isUnifiedFieldOf } from '../../lib/fields';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import type { ProvenanceSource } from '../../ui/ProvenanceBadge';
import { formatDateTime } from '../../ui/utils/time';
import {
  asOfQuery,
  type HistoryPage,
  historyQuery,
  isApiError,
  type Provenance,
  type RecordType,
  type RecordView,
  recordKeys,
  recordQuery,
} from './api';
import { AsOfSlider } from './components/AsOfSlider';
import { AssociationsSection } from './components/AssociationsSection';
import { FieldRow, ReadOnlyFieldRow } from './components/FieldRow';
import { HistoryTab } from './components/HistoryTab';
import { IdentityTab } from './components/IdentityTab';
import { InsightsSection } from './components/InsightsSection';
import { OpenConflicts } from './components/OpenConflicts';
import { RecordHeader } from './components/RecordHeader';
import { TimelineTab } from './components/TimelineTab';
import { CALLOUT_STYLES, providerName, TYPE_LABEL } from './utils/format';

export type RecordTab = 'timeline' | 'history' | 'identity';

export interface RecordPageProps {
  type: RecordType;
  id: string;
  tab?: RecordTab;
  /** ISO time: the fields as they were then, read-only. */
  asOf?: string;
}

/** A value's source as the API names it; `label` and `actorKind` where the API resolved them. */
type SourceRef = ProvenanceSource;

/**
 * How each source reads: the API's label where it gives one, else the history's label for
 * the same source, else the provider of the linked system (a conflict's candidates carry ids only).
 */
function useSourceNames(record: RecordView | undefined, history: HistoryPage[] | undefined) {
  return useMemo(() => {
    const names = new Map<string, string>();
    for (const link of record?.sourceLinks ?? []) names.set(link.connectionId, providerName(link.provider));
    for (const provenance of Object.values(record?.provenance ?? {}))
      if (provenance.source.label) names.set(provenance.source.id, provenance.source.label);
    for (const page of history ?? [])
      for (const { source } of page.data) if (source.label) names.set(source.id, source.label);
    return (source: SourceRef): ProvenanceSource => ({
      ...source,
      label: source.label ?? names.get(source.id) ?? null,
    });
  }, [record, history]);
}

function FieldsSkeleton() {
  return (
    <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading the record">
      <Skeleton height={32} width="60%" />
      <Skeleton height={16} width="40%" />
      {[0, 1, 2, 3, 4, 5].map((n) => (
        <Skeleton key={n} height={48} />
      ))}
    </Stack>
  );
}

/** Every unified field of the type, then the custom fields the record carries. */
function fieldNames(type: RecordType, fields: Record<string, unknown>): string[] {
  const unified = fieldsOf(type).map(([name]) => name);
  const custom = Object.keys(fields)
    .filter((name) => !isUnifiedFieldOf(type, name))
    .sort();
  return [...unified, ...custom];
}

function FieldsSection({
  type,
  record,
  asOf,
  sourceOf,
}: {
  type: RecordType;
  record: RecordView;
  asOf: string | undefined;
  sourceOf: (source: SourceRef) => ProvenanceSource;
}) {
  const past = useQuery({ ...asOfQuery(type, record.id, asOf ?? ''), enabled: asOf !== undefined });
  const badgeSource = useCallback((provenance: Provenance) => sourceOf(provenance.source), [sourceOf]);

  if (asOf !== undefined) {
    if (past.isPending) return <FieldsSkeleton />;
    if (past.isError)
      return isApiError(past.error, 404) && past.error.code === 'not_yet_existing' ? (
        <EmptyState title="Not there yet">
          The {TYPE_LABEL[type].toLowerCase()} did not exist at {formatDateTime(asOf)}.
        </EmptyState>
      ) : (
        <ErrorState error={past.error} onRetry={() => void past.refetch()} />
      );
    return (
      <Stack gap={0}>
        {fieldNames(type, past.data.fields).map((field) => (
          <ReadOnlyFieldRow
            key={field}
            type={type}
            field={field}
            label={fieldLabel(type, field)}
            value={past.data.fields[field]}
            provenance={past.data.provenance[field]}
            sourceOf={badgeSource}
          />
        ))}
      </Stack>
    );
  }
  return (
    <Stack gap={0}>
      {fieldNames(type, record.fields).map((field) => (
        <FieldRow
          key={`${record.id}:${field}`}
          type={type}
          record={record}
          field={field}
          label={fieldLabel(type, field)}
          value={record.fields[field]}
          provenance={record.provenance[field]}
          sourceOf={badgeSource}
          inConflict={record.openConflicts.some((conflict) => conflict.field === field)}
        />
      ))}
    </Stack>
  );
}

const TABS: readonly { value: RecordTab; label: string }[] = [
  { value: 'timeline', label: 'Timeline' },
  { value: 'history', label: 'History' },
  { value: 'identity', label: 'Identity' },
];

/**
 * The unified record: header with its systems and conflicts, fields with their provenance
 * and inline edit, associations, and tabs for its timeline, history and identity. `asOf`
 * shows the fields as they were at that time, read-only.
 */
export function RecordPage({ type, id: idInUrl, tab = 'timeline', asOf }: RecordPageProps) {
  const id = idInUrl.toLowerCase();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const record = useQuery(recordQuery(type, id));
  const history = useInfiniteQuery(historyQuery(type, id));
  const sourceOf = useSourceNames(record.data, history.data?.pages);

  // A merged-away id (or one spelled otherwise) answers as the survivor: go to the survivor's page.
  const survivor = record.data && (record.data.mergedInto ?? (record.data.id !== id ? record.data.id : null));
  useEffect(() => {
    if (!survivor || !record.data) return;
    if (record.data.id === survivor) queryClient.setQueryData(recordKeys.detail(type, survivor), record.data);
    const params = { id: survivor };
    const search = (prev: Record<string, unknown>) => prev;
    if (type === 'person') void navigate({ to: '/people/$id', params, search, replace: true });
    else if (type === 'company') void navigate({ to: '/companies/$id', params, search, replace: true });
    else void navigate({ to: '/deals/$id', params, search, replace: true });
  }, [survivor, record.data, queryClient, type, navigate]);

  const setSearch = useCallback(
    (patch: { tab?: RecordTab; asOf?: string | undefined }) =>
      void navigate({ to: '.', search: (prev: Record<string, unknown>) => ({ ...prev, ...patch }) }),
    [navigate],
  );

  const title = record.data?.displayName;
  useEffect(() => {
    if (title === undefined) return;
    const previous = document.title;
    document.title = `${title ?? `Unnamed ${TYPE_LABEL[type].toLowerCase()}`} · Syncline`;
    return () => {
      document.title = previous;
    };
  }, [title, type]);

  const changeTimes = useMemo(
    () => history.data?.pages.flatMap((page) => page.data.map((entry) => entry.at)) ?? [],
    [history.data],
  );

  if (record.isPending) return <FieldsSkeleton />;
  if (record.isError)
    return isApiError(record.error, 404) ? (
      <EmptyState title={`No such ${TYPE_LABEL[type].toLowerCase()}`}>
        It may have been deleted, or the link is from another workspace.
      </EmptyState>
    ) : (
      <ErrorState error={record.error} onRetry={() => void record.refetch()} />
    );
  const view = record.data;

  return (
    <Stack gap="lg" p={{ base: 'xs', sm: 'md' }} maw={1200}>
      <RecordHeader type={type} record={view} />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 8 }}>
          <Paper withBorder p="md" component="section" aria-labelledby="fields-title">
            <Title order={2} size="h4" id="fields-title" mb="xs">
              Fields
            </Title>
            {asOf !== undefined && (
              <Alert
                color="blue"
                styles={CALLOUT_STYLES}
                variant="light"
                role="status"
                mb="sm"
                title={`As of ${formatDateTime(asOf)}`}
              >
                <Group justify="space-between" gap="xs">
                  <Text size="sm">The fields as they were then, read-only.</Text>
                  <Button size="xs" variant="default" onClick={() => setSearch({ asOf: undefined })}>
                    Back to now
                  </Button>
                </Group>
              </Alert>
            )}
            {!history.isError && (
              <AsOfSlider
                changeTimes={changeTimes}
                loading={history.isPending}
                asOf={asOf}
                onChange={(at) => setSearch({ asOf: at })}
              />
            )}
            <FieldsSection type={type} record={view} asOf={asOf} sourceOf={sourceOf} />
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Stack gap="lg">
            <OpenConflicts
              type={type}
              recordId={view.id}
              conflicts={view.openConflicts}
              sourceOf={sourceOf}
            />
            {type === 'person' && <InsightsSection id={view.id} />}
            <Paper withBorder p="md">
              <AssociationsSection type={type} associations={view.associations} />
            </Paper>
          </Stack>
        </Grid.Col>
      </Grid>
      <Tabs
        value={tab}
        onChange={(value) => value !== null && setSearch({ tab: value as RecordTab })}
        keepMounted={false}
        id="record-tabs"
      >
        <Tabs.List style={{ flexWrap: 'nowrap', overflowX: 'auto' }}>
          {TABS.map(({ value, label }) => (
            <Tabs.Tab key={value} value={value}>
              {label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="timeline" pt="md">
          <TimelineTab type={type} id={view.id} />
        </Tabs.Panel>
        <Tabs.Panel value="history" pt="md">
          <HistoryTab type={type} query={history} />
        </Tabs.Panel>
        <Tabs.Panel value="identity" pt="md">
          <IdentityTab type={type} id={view.id} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
