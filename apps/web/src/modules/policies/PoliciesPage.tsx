import { Alert, Button, Group, SimpleGrid, Skeleton, Stack, Tabs, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { describeError } from '../../api/errors';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { formatDateTime } from '../../ui/utils/time';
import { useStartReplay } from '../replays/api';
import { ReplayStartError } from '../replays/components/ReplayRunningNotice';
import { type PolicySet, policySetQuery, sourcesQuery, useSavePolicies } from './api';
import { FieldPolicyRow } from './components/FieldPolicyRow';
import { PolicyRevisions } from './components/PolicyRevisions';
import {
  bodyOf,
  changedFields,
  completeOrder,
  ENTITY_LABELS,
  fieldErrorsOf,
  fieldLabel,
  POLICY_ENTITIES,
  type PolicyEntity,
  type PolicyKind,
  type PolicyMap,
  policyOf,
} from './utils/policy-draft';
import { rankableSources, sourceNamer } from './utils/sources';

/** How the merge settles a field edited in two places, per entity type: read, change, save, replay. */
export function PoliciesPage({ entity }: { entity: PolicyEntity }) {
  const navigate = useNavigate();
  return (
    <Stack gap="md">
      <Title order={1}>Merge policies</Title>
      <Text c="dimmed" maw={720}>
        When a field is edited in two places, its policy decides which value stands. Choose one per field; a
        replay applies a change to what was merged before.
      </Text>
      <Tabs
        value={entity}
        onChange={(value) =>
          value !== null && void navigate({ to: '/admin/policies/$entity', params: { entity: value } })
        }
        keepMounted={false}
        id="policy-tabs"
      >
        <Tabs.List style={{ flexWrap: 'nowrap', overflowX: 'auto' }}>
          {POLICY_ENTITIES.map((value) => (
            <Tabs.Tab key={value} value={value}>
              {ENTITY_LABELS[value]}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {POLICY_ENTITIES.map((value) => (
          <Tabs.Panel key={value} value={value} pt="md">
            <EntityPolicies key={value} entity={value} />
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}

function EntityPolicies({ entity }: { entity: PolicyEntity }) {
  const set = useQuery(policySetQuery(entity));
  const sources = useQuery(sourcesQuery());
  // Kept here: the form starts afresh (keyed by version) once a save returns the new set.
  const [savedVersion, setSavedVersion] = useState<number | null>(null);

  if (set.isPending || sources.isPending)
    return (
      <Stack gap="sm" role="status" aria-busy="true" aria-label="Loading the policies">
        <Skeleton height={72} />
        <Skeleton height={72} />
        <Skeleton height={72} />
      </Stack>
    );
  if (set.isError) return <ErrorState error={set.error} onRetry={() => void set.refetch()} />;
  if (sources.isError) return <ErrorState error={sources.error} onRetry={() => void sources.refetch()} />;
  return (
    <PolicyForm
      key={set.data.version}
      entity={entity}
      set={set.data}
      connections={sources.data}
      justSaved={savedVersion === set.data.version}
      onSaved={setSavedVersion}
      onReload={() => void set.refetch()}
    />
  );
}

type Connections = Parameters<typeof sourceNamer>[0];

function PolicyForm({
  entity,
  set,
  connections,
  justSaved,
  onSaved,
  onReload,
}: {
  entity: PolicyEntity;
  set: PolicySet;
  connections: Connections;
  /** This version was saved from this page: offer a replay. */
  justSaved: boolean;
  onSaved: (version: number) => void;
  onReload: () => void;
}) {
  const navigate = useNavigate();
  const save = useSavePolicies(entity);
  const preview = useStartReplay();
  const saved = set.fields as PolicyMap;
  const [draft, setDraft] = useState<PolicyMap>(saved);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [stale, setStale] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<unknown>(null);

  const nameOf = useMemo(() => sourceNamer(connections), [connections]);
  const sources = useMemo(() => rankableSources(connections), [connections]);
  const fields = Object.keys(saved);
  const changed = changedFields(draft, saved);
  const dirty = changed.length > 0;

  const update = (field: string, policy: PolicyMap[string]) => {
    setDraft((current) => ({ ...current, [field]: policy }));
    setFieldErrors(({ [field]: _, ...rest }) => rest);
  };

  const onSave = () => {
    setSaveError(null);
    setStale(null);
    save.mutate(
      { fields: bodyOf(draft), version: set.version },
      {
        onSuccess: (outcome) => {
          if (outcome.kind === 'stale') {
            setStale(outcome.message);
            return;
          }
          // The form is keyed by the version: the saved set comes back as a fresh form.
          onSaved(outcome.set.version);
        },
        onError: (error) => {
          setSaveError(error);
          setFieldErrors(fieldErrorsOf(error.message, fields));
        },
      },
    );
  };

  const showSaved = justSaved && !dirty;

  if (fields.length === 0)
    return <EmptyState title="No fields">This type has no fields to set a policy for.</EmptyState>;

  return (
    <Stack gap="sm">
      <Text size="sm" c="dimmed">
        Version {set.version}
        {set.updatedAt !== null ? `, saved ${formatDateTime(set.updatedAt)}` : ' (every field as it comes)'}
      </Text>
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm" verticalSpacing="sm">
        {fields.map((field) => {
          const policy = draft[field] ?? { kind: 'lww' as const };
          const label = fieldLabel(entity, field);
          return (
            <FieldPolicyRow
              key={field}
              label={label}
              policy={policy}
              strategies={(set.strategies[field] ?? ['lww', 'priority', 'manual']) as PolicyKind[]}
              changed={changed.includes(field)}
              error={fieldErrors[field]}
              nameOf={nameOf}
              completeOrder={(order) => completeOrder(order, sources)}
              onChange={(next) => update(field, next)}
              onKind={(kind) => update(field, policyOf(kind, sources, policy))}
            />
          );
        })}
      </SimpleGrid>
      {/* The outcome of a save sits with its button, in view wherever the form is scrolled. */}
      <Stack
        gap="xs"
        py="sm"
        style={{
          position: 'sticky',
          bottom: 0,
          zIndex: 2,
          background: 'var(--mantine-color-body)',
          borderTop: '1px solid var(--mantine-color-default-border)',
        }}
      >
        {stale !== null && (
          <Alert color="yellow" variant="outline" title="Someone else changed these policies" role="alert">
            <Stack gap="xs">
              <Text size="sm">
                They were saved by someone else after you opened this page ({stale}). Reload to see their
                version; the changes you made here are dropped, so note them first if you want to make them
                again.
              </Text>
              <Group>
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => {
                    setStale(null);
                    setDraft(saved);
                    onReload();
                  }}
                >
                  Reload their version
                </Button>
              </Group>
            </Stack>
          </Alert>
        )}
        {saveError !== null && <SaveError error={saveError} />}
        {showSaved && (
          <Alert color="green" variant="outline" title={`Saved: version ${set.version}`} role="status">
            <Stack gap="xs">
              <Text size="sm">
                Every change that comes after this save follows these policies, in whatever order the sync
                reads it. Values merged before keep what they have until they change again or a replay applies
                the policies to the past; preview one to see what it would change.
              </Text>
              <Group>
                <Button
                  size="xs"
                  loading={preview.isPending}
                  onClick={() =>
                    preview.mutate(
                      { from: 'beginning', mode: 'preview' },
                      {
                        onSuccess: (replay) =>
                          void navigate({ to: '/admin/replays/$id', params: { id: replay.id } }),
                      },
                    )
                  }
                >
                  Preview a replay
                </Button>
              </Group>
              {preview.isError && <ReplayStartError error={preview.error} />}
            </Stack>
          </Alert>
        )}
        <Group gap="sm">
          <Button onClick={onSave} disabled={!dirty} loading={save.isPending}>
            Save policies
          </Button>
          <Button
            variant="default"
            disabled={!dirty || save.isPending}
            onClick={() => {
              setDraft(saved);
              setFieldErrors({});
              setSaveError(null);
            }}
          >
            Discard changes
          </Button>
          <Text size="sm" c="dimmed" aria-live="polite">
            {dirty
              ? `${changed.length} ${changed.length === 1 ? 'field' : 'fields'} changed, not saved`
              : 'No unsaved changes'}
          </Text>
        </Group>
      </Stack>
      <PolicyRevisions
        entity={entity}
        currentVersion={set.version}
        nameOf={nameOf}
        onRestore={(revision) => {
          const restored: PolicyMap = Object.fromEntries(fields.map((f) => [f, { kind: 'lww' as const }]));
          setDraft({ ...restored, ...(revision.fields as PolicyMap) });
          setFieldErrors({});
          notifications.show({
            title: `Version ${revision.version} is in the form`,
            message: 'Review it, then Save policies to make it the current set.',
          });
          window.scrollTo({ top: 0, behavior: 'smooth' });
        }}
      />
    </Stack>
  );
}

function SaveError({ error }: { error: unknown }) {
  const { title, message, code } = describeError(error);
  return (
    <Alert color="red" variant="outline" title={title} role="alert">
      <Text size="sm">{message}</Text>
      {code === 'validation_failed' && (
        <Text size="sm" mt={4}>
          The fields it names are marked below: choose another policy for them and save again.
        </Text>
      )}
    </Alert>
  );
}
