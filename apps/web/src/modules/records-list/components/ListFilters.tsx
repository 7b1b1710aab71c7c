import { Autocomplete, Button, Group, Select, TextInput, type TextInputProps } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { useEffect, useState } from 'react';
import { TREND_OPTIONS } from '../utils/last-contacted';
import { DEFAULT_SORT, LIST_SORTS, type ListSearch, type ListSort, type Trend } from '../utils/list-search';

const SORT_LABELS: Record<ListSort, string> = {
  '-updatedAt': 'Recently updated',
  updatedAt: 'Least recently updated',
  name: 'Name',
  id: 'Oldest first',
  '-lastContacted': 'Last contacted',
};

/** A text filter that writes to the URL once typing pauses; with suggestions, it offers them. */
function DebouncedInput({
  label,
  value,
  onCommit,
  suggestions,
  ...rest
}: {
  label: string;
  value: string | undefined;
  onCommit: (value: string | undefined) => void;
  suggestions?: readonly string[];
  placeholder?: string;
  w?: TextInputProps['w'];
}) {
  const [text, setText] = useState(value ?? '');
  // From the URL (back, Clear filters); not while it is the text being typed, trailing space and all.
  useEffect(
    () => setText((current) => (current.trim() === (value ?? '') ? current : (value ?? ''))),
    [value],
  );
  const commit = useDebouncedCallback((next: string) => onCommit(next.trim() === '' ? undefined : next), 350);
  const change = (next: string) => {
    setText(next);
    commit(next);
  };
  if (suggestions !== undefined)
    return <Autocomplete label={label} value={text} onChange={change} data={[...suggestions]} {...rest} />;
  return (
    <TextInput label={label} value={text} onChange={(event) => change(event.currentTarget.value)} {...rest} />
  );
}

export function ListFilters({
  search,
  withStage,
  stageLabel,
  stageSuggestions,
  onChange,
}: {
  search: ListSearch;
  withStage: boolean;
  stageLabel: string;
  stageSuggestions?: readonly string[];
  onChange: (next: ListSearch) => void;
}) {
  const set = <K extends keyof ListSearch>(key: K, value: ListSearch[K] | undefined) => {
    const next = { ...search };
    if (value === undefined) delete next[key];
    else next[key] = value;
    onChange(next);
  };
  const filtered = Object.keys(search).some((key) => key !== 'sort');

  return (
    <Group align="flex-end" gap="sm" wrap="wrap" role="search" aria-label="Filter the list">
      <DebouncedInput
        label="Search"
        placeholder="Name, email or domain"
        value={search.q}
        onCommit={(v) => set('q', v)}
        w={{ base: '100%', xs: 220 }}
      />
      <DebouncedInput
        label="Owner"
        placeholder="Owner id"
        value={search.owner}
        onCommit={(v) => set('owner', v)}
        w={140}
      />
      {withStage && (
        <DebouncedInput
          label={stageLabel}
          value={search.stage}
          onCommit={(v) => set('stage', v)}
          suggestions={stageSuggestions}
          w={180}
        />
      )}
      <TextInput
        label="Updated since"
        type="date"
        value={search.updatedSince?.slice(0, 10) ?? ''}
        onChange={(event) => set('updatedSince', event.currentTarget.value || undefined)}
        w={160}
      />
      <Select
        label="Trend"
        placeholder="Any"
        data={[...TREND_OPTIONS]}
        value={search.trend ?? null}
        onChange={(value) => set('trend', (value ?? undefined) as Trend | undefined)}
        clearable
        w={{ base: '100%', xs: 220 }}
      />
      <Select
        label="Sort by"
        data={LIST_SORTS.map((value) => ({ value, label: SORT_LABELS[value] }))}
        value={search.sort ?? DEFAULT_SORT}
        onChange={(value) =>
          set('sort', value === null || value === DEFAULT_SORT ? undefined : (value as ListSort))
        }
        allowDeselect={false}
        w={200}
      />
      {filtered && (
        <Button variant="subtle" onClick={() => onChange(search.sort ? { sort: search.sort } : {})}>
          Clear filters
        </Button>
      )}
    </Group>
  );
}
