import {
  Alert,
  Button,
  Group,
  Paper,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { describeError } from '../../../api/errors';
import { ErrorState } from '../../../ui/ErrorState';
import { StatusBadge } from '../../../ui/StatusBadge';
import { sessionQuery } from '../../auth/api';
import { type HealthNow, type TimeZoneSetting, timeZoneQuery, useSaveTimeZone } from '../api';
import { insightsHealth } from '../utils/insights-health';
import { isNewZone, supportedTimeZones, timeZoneOptions, timeZoneStatus } from '../utils/time-zone';

/** A count over its one-line meaning. */
function Count({ label, count, explanation }: { label: string; count: number; explanation: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" fw={600}>
        {count.toLocaleString('en')}
      </Text>
      <Text size="xs" c="dimmed">
        {explanation}
      </Text>
    </div>
  );
}

/**
 * How far the activity insights (last contacted, trends) are final: the workspace's watermark,
 * the connections it waits for, and the activities that came late or too late.
 */
export function InsightsHealthSection({ now }: { now: ReturnType<typeof useQuery<HealthNow>> }) {
  return (
    <Stack gap="sm" component="section" aria-labelledby="health-insights">
      <Title order={2} size="h3" id="health-insights">
        Activity insights
      </Title>
      {now.isPending ? (
        <Skeleton height={120} role="status" aria-busy="true" aria-label="Loading the activity insights" />
      ) : now.isError ? (
        <ErrorState error={now.error} onRetry={() => void now.refetch()} />
      ) : (
        <InsightsBody now={now.data} at={now.dataUpdatedAt || Date.now()} />
      )}
    </Stack>
  );
}

function InsightsBody({ now, at }: { now: HealthNow; at: number }) {
  const view = insightsHealth(now.insights, now.insightsHolders, at);
  return (
    <Paper withBorder p="md" radius="md" miw={0} style={{ overflowWrap: 'anywhere' }}>
      <Stack gap="md">
        <div>
          <Text size="xs" c="dimmed">
            Complete up to
          </Text>
          <Text size="sm" fw={600} data-testid="insights-complete-up-to">
            {view.completeUpTo}
          </Text>
          <Text size="xs" c="dimmed">
            Every connection has delivered its mails and meetings from before this time, so the figures up to
            it are final.
          </Text>
        </div>
        {view.holders.length === 0 ? (
          <Text size="sm">No connection holds it back.</Text>
        ) : (
          // On a phone the table scrolls within the page's column rather than widen the page.
          <Table.ScrollContainer minWidth={0} type="native">
            <Table
              verticalSpacing={4}
              horizontalSpacing={6}
              fz="sm"
              aria-label="Connections holding the activity insights back"
            >
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Held back by</Table.Th>
                  <Table.Th>Provider</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Its watermark</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {view.holders.map((holder) => (
                  <Table.Tr key={holder.connectionId}>
                    <Table.Th scope="row" fw={500}>
                      {holder.name}
                    </Table.Th>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{holder.provider}</Table.Td>
                    <Table.Td>
                      {holder.status === null ? (
                        '—'
                      ) : (
                        <StatusBadge label={holder.status.label} tone={holder.status.tone} />
                      )}
                    </Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{holder.watermark}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          <Count label="Late" count={view.late.count} explanation={view.late.explanation} />
          <Count label="Set aside" count={view.setAside.count} explanation={view.setAside.explanation} />
        </SimpleGrid>
        <DaysZone inForce={now.insights.timeZone} />
      </Stack>
    </Paper>
  );
}

/**
 * The zone the insights' days are cut in and, for an admin, the control to change it. The saved
 * zone is in force once the sync stage has recomputed every record's windows in it; until then
 * the section says so (the setting is asked again every few seconds meanwhile).
 */
function DaysZone({ inForce }: { inForce: string }) {
  const session = useQuery(sessionQuery);
  const setting = useQuery(timeZoneQuery());
  // Kept here: the form starts afresh (keyed by version) once a save returns the new setting.
  const [savedVersion, setSavedVersion] = useState<number | null>(null);
  const isAdmin = session.data?.role === 'admin';
  // The zone in force as the health answer has it (asked every 5 s), against the saved one.
  const status = timeZoneStatus({ timeZone: setting.data?.timeZone ?? inForce, inForce });
  return (
    <Stack gap="xs" aria-labelledby="health-insights-zone" role="group">
      <div>
        <Text size="xs" c="dimmed" id="health-insights-zone">
          Time zone
        </Text>
        <Text size="sm" fw={600} data-testid="insights-time-zone">
          {status.headline}
        </Text>
        <Text size="xs" c="dimmed">
          The 7, 30 and 90-day windows, last contacted and trend count whole days, from midnight to midnight
          in this zone.
        </Text>
        {status.pending !== null && (
          <Text size="sm" mt={4} role="status" data-testid="insights-time-zone-pending">
            {status.pending}
          </Text>
        )}
      </div>
      {isAdmin &&
        (setting.isPending ? (
          <Skeleton height={60} role="status" aria-busy="true" aria-label="Loading the time zone" />
        ) : setting.isError ? (
          <ErrorState error={setting.error} onRetry={() => void setting.refetch()} />
        ) : (
          <TimeZoneForm
            key={setting.data.version}
            setting={setting.data}
            justSaved={savedVersion === setting.data.version}
            onSaved={setSavedVersion}
            onReload={() => void setting.refetch()}
          />
        ))}
    </Stack>
  );
}

function TimeZoneForm({
  setting,
  justSaved,
  onSaved,
  onReload,
}: {
  setting: TimeZoneSetting;
  /** This version was saved from this page: say what happens next. */
  justSaved: boolean;
  onSaved: (version: number) => void;
  onReload: () => void;
}) {
  const save = useSaveTimeZone();
  const [picked, setPicked] = useState<string | null>(setting.timeZone);
  const [stale, setStale] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<unknown>(null);
  const options = useMemo(
    () => timeZoneOptions(supportedTimeZones(), [setting.timeZone, setting.inForce]),
    [setting.timeZone, setting.inForce],
  );
  const dirty = isNewZone(picked, setting.timeZone);

  const onSave = () => {
    if (!isNewZone(picked, setting.timeZone)) return;
    setSaveError(null);
    setStale(null);
    save.mutate(
      { timeZone: picked, version: setting.version },
      {
        onSuccess: (outcome) => {
          if (outcome.kind === 'stale') {
            setStale(outcome.message);
            return;
          }
          // The form is keyed by the version: the saved setting comes back as a fresh form.
          onSaved(outcome.setting.version);
        },
        onError: setSaveError,
      },
    );
  };

  return (
    <Stack gap="xs">
      <Group gap="sm" align="flex-end" wrap="wrap">
        <Select
          label="Cut days in"
          description="Search by city or region, e.g. Paris or America"
          data={options}
          value={picked}
          onChange={(value) => {
            setPicked(value);
            setSaveError(null);
          }}
          searchable
          allowDeselect={false}
          nothingFoundMessage="No such time zone"
          w={320}
          maw="100%"
        />
        <Button onClick={onSave} disabled={!dirty} loading={save.isPending}>
          Save time zone
        </Button>
      </Group>
      {stale !== null && (
        <Alert color="yellow" variant="outline" title="Someone else changed the time zone" role="alert">
          <Stack gap="xs">
            <Text size="sm">
              It was saved by someone else after you opened this page ({stale}). Reload to see their zone,
              then choose again if you still want to change it.
            </Text>
            <Group>
              <Button
                size="xs"
                variant="default"
                onClick={() => {
                  setStale(null);
                  onReload();
                }}
              >
                Reload their zone
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {saveError !== null && <SaveError error={saveError} />}
      {justSaved && !dirty && (
        <Alert color="green" variant="outline" title={`Saved: ${setting.timeZone}`} role="status">
          <Text size="sm">
            {setting.inForce === setting.timeZone
              ? `The activity insights are recomputed: their days are cut in ${setting.timeZone}.`
              : `The activity insights of every record are being recomputed with days cut in ${setting.timeZone}. Until that is done, they stay as counted in ${setting.inForce}.`}
          </Text>
        </Alert>
      )}
    </Stack>
  );
}

function SaveError({ error }: { error: unknown }) {
  const { title, message } = describeError(error);
  return (
    <Alert color="red" variant="outline" title={title} role="alert">
      <Text size="sm">{message}</Text>
    </Alert>
  );
}
