import { Alert, Button, Card, Group, Radio, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { describeError } from '../../../api/errors';
import { fieldLabel, fieldSpec, type RecordType } from '../../../lib/fields';
import { AnchorLink } from '../../../ui/AnchorLink';
import { ProvenanceBadge } from '../../../ui/ProvenanceBadge';
import { StatusBadge } from '../../../ui/StatusBadge';
import { recordQuery } from '../../records/api';
import { formatValue, fromInputText, providerName } from '../../records/utils/format';
import type { Conflict } from '../api';

const PAGE_TYPES = new Set<string>(['person', 'company', 'deal']);
const ROUTE = { person: '/people/$id', company: '/companies/$id', deal: '/deals/$id' } as const;
const TYPE_WORD: Record<string, string> = {
  person: 'Person',
  company: 'Company',
  deal: 'Deal',
  meeting: 'Meeting',
  task: 'Task',
  email_activity: 'Email',
};

const OTHER = 'other';

function valueText(type: string, field: string, value: unknown): string {
  if (PAGE_TYPES.has(type)) return formatValue(type as RecordType, field, value);
  if (value === null || value === undefined || value === '') return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One open conflict: the record, the field, the policy, and the values to choose from. */
export function ConflictCard({
  conflict,
  error,
  resolving,
  onResolve,
}: {
  conflict: Conflict;
  error: unknown;
  resolving: boolean;
  onResolve: (value: unknown) => void;
}) {
  const headingId = useId();
  const [choice, setChoice] = useState<string | null>(null);
  const [other, setOther] = useState('');
  const hasPage = PAGE_TYPES.has(conflict.recordType);
  const recordType = conflict.recordType as RecordType;
  // For the record's name and its connections' providers (candidates name connections by id).
  const record = useQuery({ ...recordQuery(recordType, conflict.recordId), enabled: hasPage });
  const providerOf = new Map(
    record.data?.sourceLinks.map((link) => [link.connectionId, link.provider]) ?? [],
  );
  const field = hasPage ? fieldLabel(recordType, conflict.field) : conflict.field;
  const name =
    record.data?.displayName ??
    `${TYPE_WORD[conflict.recordType] ?? conflict.recordType} ${conflict.recordId.slice(0, 8)}`;

  const submit = () => {
    if (choice === null) return;
    if (choice === OTHER) {
      onResolve(hasPage ? fromInputText(fieldSpec(recordType, conflict.field), other) : other);
      return;
    }
    const candidate = conflict.candidates[Number(choice)];
    if (candidate !== undefined) onResolve(candidate.value);
  };

  return (
    <Card withBorder padding="md" radius="md" component="article" aria-labelledby={headingId}>
      <Stack gap="sm">
        <Group justify="space-between" align="flex-start" wrap="wrap" gap="xs">
          <div>
            <Title order={2} size="h4" id={headingId}>
              {field} of{' '}
              {hasPage ? (
                <AnchorLink to={ROUTE[recordType]} params={{ id: conflict.recordId }} inherit>
                  {name}
                </AnchorLink>
              ) : (
                name
              )}
            </Title>
            <Text size="xs" c="dimmed">
              {TYPE_WORD[conflict.recordType] ?? conflict.recordType} · edited in two places ({conflict.kind})
            </Text>
          </div>
          <StatusBadge label={`policy: ${conflict.policy}`} tone="info" />
        </Group>
        <Radio.Group
          value={choice}
          onChange={setChoice}
          label="Keep which value?"
          name={`conflict-${conflict.id}`}
        >
          <Stack gap="xs" mt="xs">
            {conflict.candidates.map((candidate, index) => {
              const provider =
                candidate.source.kind === 'connection' ? providerOf.get(candidate.source.id) : undefined;
              return (
                <Group key={index} gap="xs" wrap="wrap" align="center">
                  <Radio
                    value={String(index)}
                    label={valueText(conflict.recordType, conflict.field, candidate.value)}
                  />
                  <ProvenanceBadge
                    source={{
                      ...candidate.source,
                      label: provider === undefined ? null : providerName(provider),
                    }}
                    eventTime={candidate.eventTime}
                    conflicted={false}
                  />
                </Group>
              );
            })}
            <Group gap="xs" wrap="wrap" align="center">
              <Radio value={OTHER} label="Other value" />
              <TextInput
                aria-label={`Other value for ${field}`}
                size="xs"
                value={other}
                onChange={(event) => {
                  setOther(event.currentTarget.value);
                  setChoice(OTHER);
                }}
                placeholder="Type a value"
                w={{ base: '100%', xs: 240 }}
              />
            </Group>
          </Stack>
        </Radio.Group>
        {error !== null && error !== undefined && (
          <Alert color="red" variant="outline" role="alert" title={describeError(error).title}>
            {describeError(error).message}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button onClick={submit} disabled={choice === null} loading={resolving}>
            Resolve
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
