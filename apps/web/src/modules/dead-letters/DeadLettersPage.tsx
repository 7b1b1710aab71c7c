import {
  Alert,
  Button,
  Checkbox,
  Group,
  List,
  Paper,
  Select,
  Skeleton,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { describeError } from '../../api/errors';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import {
  allMatchingIds,
  type BulkAction,
  type BulkResult,
  connectionLabel,
  type DeadLetter,
  deadLettersQuery,
  letterConnectionsQuery,
  MAX_BULK,
  useBulkLetters,
  useDiscardLetter,
  useRetryLetter,
} from './api';
import { LetterCard } from './components/LetterCard';
import type { DeadLetterSearch } from './utils/dead-letter-search';

const STATUS_OPTIONS = [
  { value: 'open', label: 'Open' },
  { value: 'retried', label: 'Retried' },
  { value: 'discarded', label: 'Discarded' },
  { value: 'all', label: 'Every status' },
];

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

type Pending = { action: BulkAction; ids: string[] } | { action: 'discard-one'; letter: DeadLetter } | null;

/** Work the sync gave up on: read why, fix the cause, then retry it, or discard it. */
export function DeadLettersPage({
  search,
  onSearchChange,
}: {
  search: DeadLetterSearch;
  onSearchChange: (next: DeadLetterSearch) => void;
}) {
  const list = useInfiniteQuery(deadLettersQuery(search));
  const connections = useQuery(letterConnectionsQuery);
  const retry = useRetryLetter();
  const discard = useDiscardLetter();
  const bulk = useBulkLetters();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [pending, setPending] = useState<Pending>(null);
  const [rowErrors, setRowErrors] = useState<Readonly<Record<string, unknown>>>({});
  const [bulkResult, setBulkResult] = useState<{ action: BulkAction; result: BulkResult } | null>(null);
  const [selectingAll, setSelectingAll] = useState(false);
  const [selectError, setSelectError] = useState<unknown>(null);

  const letters = useMemo(() => list.data?.pages.flatMap((page) => page.data) ?? [], [list.data]);
  const total = list.data?.pages[0]?.total ?? 0;
  const status = search.status ?? 'open';
  const openShown = useMemo(() => letters.filter((letter) => letter.status === 'open'), [letters]);
  const names = useMemo(
    () => new Map((connections.data?.data ?? []).map((c) => [c.id, connectionLabel(c)] as const)),
    [connections.data],
  );
  const nameOf = (letter: DeadLetter) =>
    letter.connectionId === null ? null : (names.get(letter.connectionId) ?? null);

  // A new filter is a new list: what was selected in the old one is not in view.
  const searchKey = JSON.stringify(search);
  useEffect(() => {
    void searchKey;
    setSelected(new Set());
    setBulkResult(null);
  }, [searchKey]);

  // Letters settled meanwhile (by anyone) leave the selection.
  useEffect(() => {
    const open = new Set(openShown.map((letter) => letter.id));
    setSelected((current) => {
      const kept = [...current].filter((id) => open.has(id) || !letters.some((l) => l.id === id));
      return kept.length === current.size ? current : new Set(kept);
    });
  }, [letters, openShown]);

  const toggle = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const allShownSelected = openShown.length > 0 && openShown.every((letter) => selected.has(letter.id));
  const someShownSelected = openShown.some((letter) => selected.has(letter.id));

  const selectAllMatching = async () => {
    setSelectingAll(true);
    setSelectError(null);
    try {
      setSelected(new Set(await allMatchingIds(search)));
    } catch (error) {
      setSelectError(error);
    } finally {
      setSelectingAll(false);
    }
  };

  const retryOne = (letter: DeadLetter) => {
    setRowErrors(({ [letter.id]: _, ...rest }) => rest);
    retry.mutate(letter.id, {
      onSuccess: (answer) =>
        notifications.show({
          color: 'green',
          title: 'Retried',
          message:
            answer.retry.source === 'push'
              ? `${plural(answer.retry.outboxRowsRequeued, 'write')} sent again; the letter is closed.`
              : 'The change is being applied again; the letter is closed.',
        }),
      onError: (error) => setRowErrors((current) => ({ ...current, [letter.id]: error })),
    });
  };

  const runBulk = (action: BulkAction, ids: string[]) => {
    setBulkResult(null);
    bulk.mutate(
      { action, ids },
      {
        onSuccess: (result) => {
          setPending(null);
          setSelected(new Set(result.data.filter((one) => !one.ok).map((one) => one.id)));
          setBulkResult({ action, result });
          if (result.failed === 0)
            notifications.show({
              color: 'green',
              title: action === 'retry' ? 'Retried' : 'Discarded',
              message: `${plural(result.settled, 'letter')} ${action === 'retry' ? 'retried' : 'discarded'}.`,
            });
        },
      },
    );
  };

  const confirm = () => {
    if (pending === null) return;
    if (pending.action === 'discard-one') {
      const { letter } = pending;
      setRowErrors(({ [letter.id]: _, ...rest }) => rest);
      discard.mutate(letter.id, {
        onSuccess: () => {
          setPending(null);
          notifications.show({
            color: 'green',
            title: 'Discarded',
            message: 'The letter is closed; nothing was redone.',
          });
        },
        onError: (error) => {
          setPending(null);
          setRowErrors((current) => ({ ...current, [letter.id]: error }));
        },
      });
    } else runBulk(pending.action, pending.ids);
  };

  const connectionOptions = (connections.data?.data ?? []).map((c) => ({
    value: c.id,
    label: connectionLabel(c),
  }));
  const filtered = search.connectionId !== undefined || status !== 'open';

  return (
    <Stack gap="md">
      <div>
        <Title order={1}>Dead letters</Title>
        <Text c="dimmed" size="sm" maw={720}>
          Changes and writes the sync gave up on after retrying. Read the error, fix its cause (a value the
          other system refuses, a missing permission, a mapping), then Retry. Discard what should never be
          applied.
        </Text>
      </div>
      <Group gap="sm" align="flex-end" wrap="wrap">
        <Select
          label="Status"
          data={STATUS_OPTIONS}
          value={status}
          allowDeselect={false}
          onChange={(value) => {
            const next = (value ?? 'open') as NonNullable<DeadLetterSearch['status']>;
            const { status: _, ...rest } = search;
            onSearchChange(next === 'open' ? rest : { ...rest, status: next });
          }}
          w={180}
        />
        <Select
          label="Connection"
          placeholder="Every connection"
          data={connectionOptions}
          value={search.connectionId ?? null}
          clearable
          searchable
          nothingFoundMessage="No connection by that name"
          onChange={(value) => {
            const { connectionId: _, ...rest } = search;
            onSearchChange(value === null ? rest : { ...rest, connectionId: value });
          }}
          w={260}
          maw="100%"
        />
      </Group>

      {openShown.length > 0 && (
        <Paper withBorder p="sm" radius="md" component="section" aria-label="Selection">
          <Group gap="sm" wrap="wrap" justify="space-between">
            <Group gap="sm" wrap="wrap">
              <Checkbox
                label="Select all shown"
                checked={allShownSelected}
                indeterminate={someShownSelected && !allShownSelected}
                onChange={(event) => {
                  const on = event.currentTarget.checked;
                  setSelected((current) => {
                    const next = new Set(current);
                    for (const letter of openShown) {
                      if (on) next.add(letter.id);
                      else next.delete(letter.id);
                    }
                    return next;
                  });
                }}
              />
              <Text size="sm" aria-live="polite">
                {plural(selected.size, 'letter')} selected
              </Text>
              {status === 'open' && total > selected.size && (
                <Button
                  size="xs"
                  variant="default"
                  loading={selectingAll}
                  onClick={() => void selectAllMatching()}
                >
                  Select all {Math.min(total, MAX_BULK)} matching
                  {total > MAX_BULK ? ` (of ${total}; ${MAX_BULK} at a time)` : ''}
                </Button>
              )}
              {selected.size > 0 && (
                <Button size="xs" variant="default" onClick={() => setSelected(new Set())}>
                  Clear selection
                </Button>
              )}
            </Group>
            <Group gap="xs">
              <Button
                size="xs"
                color="blue.8"
                disabled={selected.size === 0}
                onClick={() => setPending({ action: 'retry', ids: [...selected] })}
              >
                Retry selected
              </Button>
              <Button
                size="xs"
                variant="default"
                disabled={selected.size === 0}
                onClick={() => setPending({ action: 'discard', ids: [...selected] })}
              >
                Discard selected
              </Button>
            </Group>
          </Group>
          {selectError !== null && (
            <Text size="sm" c="red.8" mt="xs" role="alert">
              Could not select every matching letter: {describeError(selectError).message}
            </Text>
          )}
        </Paper>
      )}

      {bulk.isError && <ErrorState error={bulk.error} />}
      {bulkResult !== null && bulkResult.result.failed > 0 && (
        <Alert
          color="orange"
          variant="outline"
          role="alert"
          title={`${plural(bulkResult.result.settled, 'letter')} ${bulkResult.action === 'retry' ? 'retried' : 'discarded'}, ${plural(bulkResult.result.failed, 'letter')} left as ${bulkResult.result.failed === 1 ? 'it was' : 'they were'}`}
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setBulkResult(null)}
        >
          <Text size="sm">Those still selected below; each says why:</Text>
          <List size="sm" spacing={2} mt={4}>
            {bulkResult.result.data
              .filter((one) => !one.ok)
              .slice(0, 20)
              .map((one) => (
                <List.Item key={one.id}>
                  {one.outcome === 'not_retryable'
                    ? 'Cannot be redone (only changes and writes can): discard it once its cause is fixed.'
                    : one.outcome === 'not_open'
                      ? 'Already retried or discarded by someone else.'
                      : one.outcome === 'not_found'
                        ? 'No longer exists.'
                        : (one.message ?? one.outcome)}{' '}
                  <Text span size="xs" c="dimmed">
                    ({one.id.slice(0, 8)})
                  </Text>
                </List.Item>
              ))}
          </List>
        </Alert>
      )}

      {list.isPending ? (
        <Stack gap="sm" role="status" aria-busy="true" aria-label="Loading dead letters">
          {Array.from({ length: 4 }, (_, i) => (
            <Skeleton key={i} height={96} />
          ))}
        </Stack>
      ) : list.isError && letters.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : letters.length === 0 ? (
        <EmptyState title={filtered ? 'No letters match these filters' : 'No open dead letters'}>
          {filtered ? (
            <Button variant="default" onClick={() => onSearchChange({})}>
              Show open letters of every connection
            </Button>
          ) : (
            'Every change and write went through. When one fails for good, it waits here with its error for you to retry or discard.'
          )}
        </EmptyState>
      ) : (
        <>
          <Stack component="ul" gap="sm" p={0} m={0} style={{ listStyle: 'none' }} aria-label="Dead letters">
            {letters.map((letter) => (
              <LetterCard
                key={letter.id}
                letter={letter}
                connection={nameOf(letter)}
                selected={selected.has(letter.id)}
                onSelect={(on) => toggle(letter.id, on)}
                onRetry={() => retryOne(letter)}
                onDiscard={() => setPending({ action: 'discard-one', letter })}
                busy={
                  retry.isPending && retry.variables === letter.id
                    ? 'retry'
                    : discard.isPending && discard.variables === letter.id
                      ? 'discard'
                      : null
                }
                error={rowErrors[letter.id] ?? null}
              />
            ))}
          </Stack>
          {list.isError && <ErrorState error={list.error} onRetry={() => void list.fetchNextPage()} />}
          <LoadMore query={list} summary={<>{plural(total, 'letter')}, all shown</>} />
        </>
      )}

      <ConfirmDialog
        opened={pending !== null}
        title={
          pending === null
            ? ''
            : pending.action === 'retry'
              ? `Retry ${plural(pending.ids.length, 'letter')}?`
              : pending.action === 'discard'
                ? `Discard ${plural(pending.ids.length, 'letter')}?`
                : 'Discard this letter?'
        }
        confirmLabel={
          pending?.action === 'retry'
            ? 'Retry'
            : pending?.action === 'discard'
              ? `Discard ${plural(pending.ids.length, 'letter')}`
              : 'Discard'
        }
        danger={pending?.action !== 'retry'}
        loading={bulk.isPending || discard.isPending}
        onCancel={() => setPending(null)}
        onConfirm={confirm}
      >
        {pending?.action === 'retry' ? (
          <Text size="sm">
            Each change is applied again and each refused write is sent again. If its cause is not fixed yet,
            it fails again and comes back here. Letters that cannot be redone are left open and listed.
          </Text>
        ) : (
          <Text size="sm">
            Discarding gives up on{' '}
            {pending?.action === 'discard' ? 'these changes or writes' : 'this change or write'}: nothing is
            redone, and the systems keep the values they have now. It is recorded in the audit log and cannot
            be undone.
          </Text>
        )}
        {bulk.isError && (
          <Text size="sm" c="red.8" role="alert">
            {describeError(bulk.error).message}
          </Text>
        )}
      </ConfirmDialog>
    </Stack>
  );
}
