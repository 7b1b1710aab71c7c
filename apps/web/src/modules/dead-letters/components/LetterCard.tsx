import {
  Alert,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  List,
  Skeleton,
  Stack,
  Text,
  Textarea,
  Tooltip,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { describeError } from '../../../api/errors';
import { StatusBadge, type Tone } from '../../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../../ui/utils/time';
import { type DeadLetter, deadLetterQuery } from '../api';
import { copyText } from '../utils/clipboard';
import { errorReport, isRetryable, payloadSummary, sourceSentence } from '../utils/letter-text';

const STATUS_TONE: Record<DeadLetter['status'], Tone> = {
  open: 'danger',
  retried: 'success',
  discarded: 'neutral',
};

function LetterDetails({ letter, connection }: { letter: DeadLetter; connection: string | null }) {
  const detail = useQuery(deadLetterQuery(letter.id));
  const [copy, setCopy] = useState<'idle' | 'copied' | 'by-hand'>('idle');
  const report = errorReport(letter, connection);
  const facts = detail.data === undefined ? [] : payloadSummary(letter.source, detail.data.payload);
  return (
    <Stack gap="sm" mt="sm">
      <div>
        <Text size="sm" fw={600}>
          Error
        </Text>
        <Code block style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {letter.errorCode}: {letter.errorMessage}
        </Code>
      </div>
      <Group gap="sm">
        <Button
          size="xs"
          variant="default"
          onClick={() => void copyText(report).then((ok) => setCopy(ok ? 'copied' : 'by-hand'))}
        >
          {copy === 'copied' ? 'Copied' : 'Copy error'}
        </Button>
        <Text size="xs" c="dimmed" role="status">
          {copy === 'copied' ? 'The error and where it happened are on your clipboard.' : ''}
        </Text>
      </Group>
      {copy === 'by-hand' && (
        <Textarea
          label="The browser did not allow copying: select this text and copy it"
          value={report}
          readOnly
          autosize
          minRows={3}
          onFocus={(event) => event.currentTarget.select()}
        />
      )}
      <div>
        <Text size="sm" fw={600}>
          What failed
        </Text>
        {detail.isPending ? (
          <Skeleton height={60} role="status" aria-label="Loading the letter's payload" />
        ) : detail.isError ? (
          <Text size="sm" c="red.8">
            {describeError(detail.error).message}
          </Text>
        ) : (
          <>
            {facts.length > 0 && (
              <List size="sm" spacing={2} mb="xs">
                {facts.map((fact) => (
                  <List.Item key={fact}>{fact}</List.Item>
                ))}
              </List>
            )}
            <Code
              block
              aria-label="The letter's payload"
              style={{ maxHeight: 240, overflow: 'auto', whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}
            >
              {JSON.stringify(detail.data.payload, null, 2)}
            </Code>
          </>
        )}
      </div>
      <Text size="xs" c="dimmed">
        Letter {letter.id}
        {letter.eventKey === null ? '' : ` · event ${letter.eventKey}`}
        {letter.groupName === null ? '' : ` · group ${letter.groupName}`}
        {letter.offset === null ? '' : ` · partition ${letter.partition}, offset ${letter.offset}`}
        {letter.resolvedAt === null ? '' : ` · ${letter.status} ${formatDateTime(letter.resolvedAt)}`}
      </Text>
    </Stack>
  );
}

export function LetterCard({
  letter,
  connection,
  selected,
  onSelect,
  onRetry,
  onDiscard,
  busy,
  error,
}: {
  letter: DeadLetter;
  /** The connection's name, null without one. */
  connection: string | null;
  selected: boolean;
  onSelect: (selected: boolean) => void;
  onRetry: () => void;
  onDiscard: () => void;
  busy: 'retry' | 'discard' | null;
  error: unknown;
}) {
  const [open, setOpen] = useState(false);
  const detailsId = useId();
  const isOpen = letter.status === 'open';
  const retryable = isRetryable(letter.source);
  const name = `${letter.errorCode} from ${connection ?? 'no connection'}`;
  return (
    <Card withBorder padding="sm" radius="md" component="li" aria-label={name} data-letter-id={letter.id}>
      <Group align="flex-start" wrap="nowrap" gap="sm">
        {isOpen && (
          <Checkbox
            mt={4}
            aria-label={`Select ${name}`}
            checked={selected}
            onChange={(event) => onSelect(event.currentTarget.checked)}
          />
        )}
        <Stack gap={4} style={{ flex: 1, minWidth: 0, overflowWrap: 'anywhere' }}>
          <Group gap="xs" wrap="wrap">
            <Text fw={600} size="sm">
              {letter.errorCode}
            </Text>
            <StatusBadge label={letter.status} tone={STATUS_TONE[letter.status]} size="xs" />
            <StatusBadge label={letter.source} size="xs" />
          </Group>
          <Text size="sm" lineClamp={open ? undefined : 2}>
            {letter.errorMessage}
          </Text>
          <Text size="xs" c="dimmed">
            {sourceSentence(letter.source)} · {connection ?? 'no connection'} · {letter.attempts}{' '}
            {letter.attempts === 1 ? 'attempt' : 'attempts'} ·{' '}
            <Tooltip label={formatDateTime(letter.createdAt)}>
              <span>{relativeTime(letter.createdAt)}</span>
            </Tooltip>
          </Text>
          <Group gap="xs" mt={4}>
            <Button
              size="xs"
              variant="default"
              aria-expanded={open}
              aria-controls={detailsId}
              onClick={() => setOpen((was) => !was)}
            >
              {open ? 'Hide details' : 'Details'}
            </Button>
            {isOpen && (
              <>
                <Button
                  size="xs"
                  color="blue.8"
                  onClick={onRetry}
                  loading={busy === 'retry'}
                  disabled={!retryable || busy !== null}
                  aria-describedby={retryable ? undefined : `${detailsId}-why`}
                >
                  Retry
                </Button>
                <Button
                  size="xs"
                  variant="default"
                  onClick={onDiscard}
                  loading={busy === 'discard'}
                  disabled={busy !== null}
                >
                  Discard
                </Button>
              </>
            )}
          </Group>
          {isOpen && !retryable && (
            <Text id={`${detailsId}-why`} size="xs" c="dimmed">
              Only changes and writes can be redone: discard this one once its cause is fixed.
            </Text>
          )}
          {error !== null && error !== undefined && (
            <Alert color="red" variant="outline" title={describeError(error).title} role="alert" p="xs">
              <Text size="sm">{describeError(error).message}</Text>
            </Alert>
          )}
          <div id={detailsId}>{open && <LetterDetails letter={letter} connection={connection} />}</div>
        </Stack>
      </Group>
    </Card>
  );
}
