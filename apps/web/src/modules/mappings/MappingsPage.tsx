import { Alert, Anchor, Button, Group, Skeleton, Stack, Tabs, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../../api/client';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorState } from '../../ui/ErrorState';
import { relativeTime } from '../../ui/utils/time';
import { providerName } from '../records/utils/format';
import {
  connectionQuery,
  type EntityType,
  type FieldMapping,
  type MappingsView,
  mappingsQuery,
  propertiesQuery,
  type Revision,
  useSaveMappings,
} from './api';
import { AddCustomField } from './components/AddCustomField';
import { MappingsTable } from './components/MappingsTable';
import { RevisionsList } from './components/RevisionsList';
import { isDirty, type Mapping, problemsByRow, removeMapping, rowsOf, setProperty } from './utils/draft';

const ENTITY_TABS: Record<string, string> = {
  person: 'People',
  company: 'Companies',
  deal: 'Deals',
  meeting: 'Meetings',
  task: 'Tasks',
  email_activity: 'Emails',
};

function BackToConnections() {
  return (
    <Anchor component={Link} to="/admin/connections">
      Back to Connections
    </Anchor>
  );
}

type SaveProblem =
  | { kind: 'stale'; message: string }
  | { kind: 'refused'; message: string; rows: Map<string, string> }
  | { kind: 'other'; error: unknown };

function problemOf(error: unknown, sent: readonly Mapping[]): SaveProblem {
  if (error instanceof ApiError && error.status === 412) return { kind: 'stale', message: error.message };
  if (error instanceof ApiError && error.status === 400)
    return { kind: 'refused', message: error.message, rows: problemsByRow(error.message, sent) };
  return { kind: 'other', error };
}

function Editor({
  id,
  view,
  entity,
  onEntityChange,
  onReload,
}: {
  id: string;
  view: MappingsView;
  entity: string | undefined;
  onEntityChange: (entity: string) => void;
  onReload: () => void;
}) {
  const entityTypes = Object.keys(view.fields);
  const current =
    (entity !== undefined && entityTypes.includes(entity) ? entity : entityTypes[0]) ?? 'person';
  const [draft, setDraft] = useState<Mapping[]>(view.mappings);
  // The version the draft was started from: what `If-Match` says on save.
  const [base, setBase] = useState(view.version);
  const [problem, setProblem] = useState<SaveProblem | null>(null);
  const [restoring, setRestoring] = useState<Revision | null>(null);
  const save = useSaveMappings(id);
  const properties = useQuery(propertiesQuery(id, current as EntityType));

  // Our save or a reload moves the saved state and the draft starts again from it. A change
  // read in the background (another admin's save) leaves a draft in progress alone: its save is
  // then a 412 that says so, rather than edits silently lost.
  const draftRef = useRef(draft);
  draftRef.current = draft;
  const lastView = useRef(view);
  const restart = useRef(false);
  useEffect(() => {
    const previous = lastView.current;
    lastView.current = view;
    if (previous === view) return;
    if (restart.current || !isDirty(draftRef.current, previous.mappings)) {
      restart.current = false;
      setDraft(view.mappings);
      setBase(view.version);
    }
  }, [view]);

  const dirty = isDirty(draft, view.mappings);
  const rows = useMemo(
    () => rowsOf(current, view.fields[current] ?? [], draft, view.mappings),
    [current, view, draft],
  );
  const rowProblems = problem?.kind === 'refused' ? problem.rows : new Map<string, string>();
  // Back at what is saved (reset or discarded), a refusal of another draft no longer applies.
  useEffect(() => {
    if (!dirty) setProblem((p) => (p?.kind === 'refused' ? null : p));
  }, [dirty]);

  const submit = (mappings: Mapping[], version: number, onDone?: () => void) => {
    setProblem(null);
    restart.current = true;
    save.mutate(
      { mappings: mappings as FieldMapping[], version },
      {
        onSuccess: (saved) => {
          notifications.show({ color: 'green', message: `Mappings saved as version ${saved.version}.` });
          onDone?.();
        },
        onError: (error) => {
          restart.current = false;
          setProblem(problemOf(error, mappings));
          onDone?.();
        },
      },
    );
  };

  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        Version {view.version}
        {view.updatedAt === null ? ' (the connector’s defaults)' : `, saved ${relativeTime(view.updatedAt)}`}.
        New mappings apply from the next read and write; values already synced stay.
      </Text>
      <Tabs value={current} onChange={(value) => value !== null && onEntityChange(value)} keepMounted={false}>
        <Tabs.List style={{ flexWrap: 'nowrap', overflowX: 'auto' }}>
          {entityTypes.map((type) => (
            <Tabs.Tab key={type} value={type}>
              {ENTITY_TABS[type] ?? type}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      {properties.isError && (
        <ErrorState error={properties.error} onRetry={() => void properties.refetch()} />
      )}
      <MappingsTable
        rows={rows}
        properties={properties.data}
        problems={rowProblems}
        onChange={(row, property) => setDraft((d) => setProperty(d, row, property))}
        onReset={(row) => setDraft((d) => removeMapping(d, row.key))}
      />
      <AddCustomField
        key={current}
        properties={properties.data}
        taken={new Set(rows.map((r) => r.field))}
        onAdd={(field, property) =>
          setDraft((d) => setProperty(d, { entityType: current, field, defaultProperty: null }, property))
        }
      />

      {problem?.kind === 'stale' && (
        <Alert color="orange" variant="outline" title="Someone else changed these mappings" role="alert">
          <Stack gap="xs">
            <Text size="sm">
              They were saved again since you opened this page ({problem.message}). Your changes are still
              here, but saving them would undo theirs. Reload to see their version, then make your changes
              again.
            </Text>
            <Group>
              <Button
                size="xs"
                variant="default"
                onClick={() => {
                  setProblem(null);
                  restart.current = true;
                  onReload();
                }}
              >
                Reload their version
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {problem?.kind === 'refused' && (
        <Alert color="red" variant="outline" title="These mappings were not saved" role="alert">
          {problem.rows.size > 0 ? (
            <Text size="sm">
              HubSpot cannot carry{' '}
              {problem.rows.size === 1 ? 'one of the fields' : `${problem.rows.size} fields`} as mapped; the{' '}
              {problem.rows.size === 1 ? 'row is' : 'rows are'} marked
              {[...problem.rows.keys()].some((k) => !k.startsWith(`${current}.`))
                ? ' (some under another tab)'
                : ''}
              . Pick another property for each, then save again.
            </Text>
          ) : (
            <Text size="sm">{problem.message}</Text>
          )}
        </Alert>
      )}
      {problem?.kind === 'other' && <ErrorState error={problem.error} />}

      <Group justify="flex-end" gap="sm">
        <Button
          variant="default"
          disabled={!dirty || save.isPending}
          onClick={() => {
            setDraft(view.mappings);
            setProblem(null);
          }}
        >
          Discard changes
        </Button>
        <Button color="blue.8" disabled={!dirty} loading={save.isPending} onClick={() => submit(draft, base)}>
          Save mappings
        </Button>
      </Group>

      <RevisionsList id={id} currentVersion={view.version} onRestore={setRestoring} />
      <ConfirmDialog
        opened={restoring !== null}
        title={`Restore version ${restoring?.version ?? ''}?`}
        confirmLabel="Restore"
        loading={save.isPending}
        onConfirm={() => restoring && submit(restoring.mappings, view.version, () => setRestoring(null))}
        onCancel={() => setRestoring(null)}
      >
        <Text size="sm">
          The mappings become those of version {restoring?.version}, saved as version {view.version + 1}
          {dirty ? '; your unsaved changes are dropped' : ''}. From the next read and write, every field syncs
          through these properties:
        </Text>
        <Text size="sm" fw={500}>
          {restoring === null || restoring.mappings.length === 0
            ? 'the connector’s defaults only'
            : restoring.mappings.map((m) => `${m.entityType}.${m.field} → ${m.property}`).join(', ')}
        </Text>
      </ConfirmDialog>
    </Stack>
  );
}

/** A connection's field mappings: which provider property carries each field, custom fields, revisions. */
export function MappingsPage({
  id,
  entity,
  onEntityChange,
}: {
  id: string;
  entity: string | undefined;
  onEntityChange: (entity: string) => void;
}) {
  const view = useQuery(mappingsQuery(id));
  const connection = useQuery(connectionQuery(id));
  const name =
    connection.data?.displayName ??
    (view.data ? `${providerName(view.data.provider)} ${view.data.externalAccountId}` : null);
  const title = name === null ? 'Field mappings' : `Field mappings: ${name}`;

  return (
    <Stack gap="md">
      <Title order={1}>{title}</Title>
      {view.isPending ? (
        <Stack gap="sm" role="status" aria-busy="true" aria-label="Loading the mappings">
          <Skeleton height={36} />
          <Skeleton height={260} />
        </Stack>
      ) : view.isError ? (
        <>
          <ErrorState error={view.error} onRetry={() => void view.refetch()} />
          <BackToConnections />
        </>
      ) : !view.data.supportsMappings ? (
        <Alert color="blue" variant="outline" title="Nothing to map here" role="status">
          <Stack gap="xs">
            <Text size="sm">
              {providerName(view.data.provider)} has fixed fields and no custom properties, so Syncline always
              syncs its standard fields and there is nothing to choose. Field mappings are for HubSpot
              portals.
            </Text>
            <BackToConnections />
          </Stack>
        </Alert>
      ) : (
        <Editor
          id={id}
          view={view.data}
          entity={entity}
          onEntityChange={onEntityChange}
          onReload={() => void view.refetch()}
        />
      )}
    </Stack>
  );
}
