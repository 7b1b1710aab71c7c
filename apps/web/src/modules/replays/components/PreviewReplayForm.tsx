import '@mantine/dates/styles.css';
import { Button, Group, Paper, Radio, Stack, Text, Title } from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useStartReplay } from '../api';
import { eventTimeOf } from '../utils/replay-view';
import { ReplayStartError } from './ReplayRunningNotice';

/** Mantine's red error text misses 4.5:1 on white: a darker red. */
const READABLE_ERROR = { error: { color: 'var(--mantine-color-red-9)' } };

/**
 * Asks for a preview: what rebuilding the records from the change log under today's policies
 * would change, from the beginning or from an event time. Nothing is written by a preview.
 */
export function PreviewReplayForm() {
  const navigate = useNavigate();
  const start = useStartReplay();
  const [scope, setScope] = useState<'beginning' | 'since'>('beginning');
  const [since, setSince] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);

  const submit = () => {
    const eventTime = eventTimeOf(since);
    if (scope === 'since' && eventTime === null) {
      setMissing(true);
      return;
    }
    start.mutate(
      { from: scope === 'beginning' || eventTime === null ? 'beginning' : { eventTime }, mode: 'preview' },
      { onSuccess: (replay) => void navigate({ to: '/admin/replays/$id', params: { id: replay.id } }) },
    );
  };

  return (
    <Paper withBorder p="md" component="section" aria-labelledby="preview-replay-title">
      <Stack gap="sm">
        <Title order={2} size="h4" id="preview-replay-title">
          Preview a replay
        </Title>
        <Text size="sm" c="dimmed">
          See what today's policies would change in the records merged so far. A preview writes nothing; you
          apply it afterwards if the report looks right.
        </Text>
        <Radio.Group
          label="Records to rebuild"
          value={scope}
          onChange={(value) => {
            setScope(value as 'beginning' | 'since');
            setMissing(false);
          }}
        >
          <Stack gap={6} mt={6}>
            <Radio value="beginning" label="Every record, from the beginning" />
            <Radio value="since" label="Records with changes since an event time" />
          </Stack>
        </Radio.Group>
        {scope === 'since' && (
          <DateTimePicker
            label="Event time"
            description="Records with an event at or after this time (your time zone) are rebuilt from their whole history."
            value={since}
            onChange={(value) => {
              setSince(value);
              setMissing(false);
            }}
            maxDate={new Date()}
            error={missing ? 'Pick the time to start from.' : undefined}
            styles={READABLE_ERROR}
            maw={360}
            clearable
          />
        )}
        <Group>
          <Button onClick={submit} loading={start.isPending}>
            Preview a replay
          </Button>
        </Group>
        {start.isError && <ReplayStartError error={start.error} />}
      </Stack>
    </Paper>
  );
}
