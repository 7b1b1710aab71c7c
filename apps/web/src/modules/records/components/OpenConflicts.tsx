import { Button, Group, Paper, Radio, Stack, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import { fieldLabel, fieldSpec } from '../../../lib/fields';
import { type ProvenanceSource, sourceLabel } from '../../../ui/ProvenanceBadge';
import { formatDateTime } from '../../../ui/utils/time';
import { type OpenConflict, type RecordType, useResolveConflictMutation } from '../api';
import { formatValue, fromInputText } from '../utils/format';

interface Candidate {
  value: unknown;
  source: ProvenanceSource;
  eventTime: string;
}

/** The candidates as the API lists them (typed loosely on the record view). */
function candidatesOf(conflict: OpenConflict): Candidate[] {
  if (!Array.isArray(conflict.candidates)) return [];
  return conflict.candidates.filter(
    (c): c is Candidate =>
      typeof c === 'object' &&
      c !== null &&
      'value' in c &&
      typeof (c as Candidate).eventTime === 'string' &&
      typeof (c as Candidate).source?.id === 'string',
  );
}

const OTHER = 'other';

function ConflictCard({
  type,
  recordId,
  conflict,
  sourceOf,
}: {
  type: RecordType;
  recordId: string;
  conflict: OpenConflict;
  sourceOf: (source: Candidate['source']) => ProvenanceSource;
}) {
  const label = fieldLabel(type, conflict.field);
  const candidates = candidatesOf(conflict);
  const [choice, setChoice] = useState<string | null>(null);
  const [other, setOther] = useState('');
  const resolve = useResolveConflictMutation(type, recordId);

  const submit = () => {
    if (choice === null) return;
    const value =
      choice === OTHER
        ? fromInputText(fieldSpec(type, conflict.field), other)
        : candidates[Number(choice)]?.value;
    resolve.mutate(
      { conflictId: conflict.id, value },
      {
        onSuccess: (record) =>
          notifications.show({
            message:
              record === null
                ? `${label}: decision accepted, applying shortly.`
                : `${label}: conflict resolved.`,
          }),
      },
    );
  };

  return (
    <Paper withBorder p="sm" component="article" aria-label={`Conflict on ${label}`}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Stack gap="xs">
          <Radio.Group
            label={`${label}: choose the value to keep`}
            description={`${conflict.kind === 'late' ? 'A late change' : 'Edited in two places'} · policy ${conflict.policy} · since ${formatDateTime(conflict.createdAt)}`}
            value={choice}
            onChange={setChoice}
          >
            <Stack gap={6} mt="xs">
              {candidates.map((candidate, index) => (
                <Radio
                  key={`${candidate.source.id}:${candidate.eventTime}`}
                  value={String(index)}
                  label={formatValue(type, conflict.field, candidate.value)}
                  description={`from ${sourceLabel(sourceOf(candidate.source))}, ${formatDateTime(candidate.eventTime)}`}
                />
              ))}
              <Radio value={OTHER} label="Another value" />
            </Stack>
          </Radio.Group>
          {choice === OTHER && (
            <TextInput
              label={`Another value for ${label}`}
              value={other}
              onChange={(event) => setOther(event.currentTarget.value)}
            />
          )}
          {resolve.error !== null && (
            <Text size="sm" c="red.8" role="alert">
              {describeError(resolve.error).message}
            </Text>
          )}
          <Group>
            <Button type="submit" size="xs" disabled={choice === null} loading={resolve.isPending}>
              Resolve {label}
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

/** The record's open conflicts, decided here as in the inbox (POST /conflicts/{id}/resolve). */
export function OpenConflicts({
  type,
  recordId,
  conflicts,
  sourceOf,
}: {
  type: RecordType;
  recordId: string;
  conflicts: OpenConflict[];
  sourceOf: (source: Candidate['source']) => ProvenanceSource;
}) {
  if (conflicts.length === 0) return null;
  return (
    <section aria-labelledby="open-conflicts" id="open-conflicts-section">
      <Title order={2} size="h4" id="open-conflicts" mb="xs" tabIndex={-1}>
        Open conflicts
      </Title>
      <Stack gap="sm">
        {conflicts.map((conflict) => (
          <ConflictCard
            key={conflict.id}
            type={type}
            recordId={recordId}
            conflict={conflict}
            sourceOf={sourceOf}
          />
        ))}
      </Stack>
    </section>
  );
}
