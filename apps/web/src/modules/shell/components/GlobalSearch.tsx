import { Button, Group, Kbd, Loader, Text, VisuallyHidden } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { Spotlight, spotlight } from '@mantine/spotlight';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import { searchQuery } from '../api';

const VISUALLY_HIDDEN = {
  position: 'absolute',
  width: 1,
  height: 1,
  padding: 0,
  margin: -1,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
  border: 0,
} as const;

type Hit = { id: string; displayName: string | null; fields: Record<string, unknown> };

const GROUPS = [
  { key: 'people', label: 'People', to: '/people/$id', detail: 'email' },
  { key: 'companies', label: 'Companies', to: '/companies/$id', detail: 'domain' },
  { key: 'deals', label: 'Deals', to: '/deals/$id', detail: 'stage' },
] as const;

/** Spotlight over people, companies and deals (`?q=`); Enter or a click opens the record. */
export function GlobalSearch() {
  const navigate = useNavigate();
  const [query, setQuery] = useState('');
  const [debounced] = useDebouncedValue(query.trim(), 250);
  const results = useQuery({ ...searchQuery(debounced), placeholderData: keepPreviousData });
  const hits = debounced.length >= 2 ? results.data : undefined;
  const total = hits === undefined ? 0 : hits.people.length + hits.companies.length + hits.deals.length;

  return (
    <>
      <Button
        variant="default"
        onClick={() => spotlight.open()}
        w={{ base: 'auto', sm: 260 }}
        justify="space-between"
        rightSection={
          <Kbd size="xs" visibleFrom="sm" aria-hidden>
            Ctrl K
          </Kbd>
        }
      >
        <Text span size="sm" c="dimmed">
          Search
          <VisuallyHidden> people, companies and deals</VisuallyHidden>
        </Text>
      </Button>
      <Spotlight.Root
        query={query}
        onQueryChange={setQuery}
        scrollable
        maxHeight={420}
        // The dialog's name; its header is there for screen readers only.
        title="Search people, companies and deals"
        styles={{ header: VISUALLY_HIDDEN }}
      >
        <Spotlight.Search
          placeholder="Search people, companies and deals"
          aria-label="Search people, companies and deals"
          rightSection={results.isFetching ? <Loader size="xs" aria-label="Searching" /> : null}
        />
        <Spotlight.ActionsList aria-label="Search results">
          {debounced.length < 2 && <Spotlight.Empty>Type at least two letters.</Spotlight.Empty>}
          {results.isError && debounced.length >= 2 && (
            <Spotlight.Empty>{describeError(results.error).message}</Spotlight.Empty>
          )}
          {hits !== undefined && total === 0 && (
            <Spotlight.Empty>Nothing matches “{debounced}”.</Spotlight.Empty>
          )}
          {hits !== undefined &&
            GROUPS.map((group) =>
              hits[group.key].length === 0 ? null : (
                <Spotlight.ActionsGroup key={group.key} label={group.label}>
                  {(hits[group.key] as Hit[]).map((hit) => {
                    const detail = hit.fields[group.detail];
                    return (
                      <Spotlight.Action
                        key={hit.id}
                        onClick={() => void navigate({ to: group.to, params: { id: hit.id } })}
                      >
                        <Group wrap="nowrap" justify="space-between" w="100%">
                          <Text size="sm" fw={500} truncate>
                            {hit.displayName ?? 'Unnamed'}
                          </Text>
                          {typeof detail === 'string' && (
                            <Text size="xs" c="dimmed" truncate>
                              {detail}
                            </Text>
                          )}
                          <VisuallyHidden>{group.label}</VisuallyHidden>
                        </Group>
                      </Spotlight.Action>
                    );
                  })}
                </Spotlight.ActionsGroup>
              ),
            )}
        </Spotlight.ActionsList>
      </Spotlight.Root>
    </>
  );
}
