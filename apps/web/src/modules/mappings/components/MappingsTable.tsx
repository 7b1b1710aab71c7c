import { ActionIcon, Badge, Group, Paper, Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useMemo } from 'react';
import { fieldLabel, RECORD_TYPES, type RecordType } from '../../../lib/fields';
import type { PropertyList } from '../api';
import type { MappingRow } from '../utils/draft';
import { PropertySelect } from './PropertySelect';

const labelOf = (row: MappingRow): string =>
  (RECORD_TYPES as readonly string[]).includes(row.entityType)
    ? fieldLabel(row.entityType as RecordType, row.field)
    : row.field;

function RowState({ row }: { row: MappingRow }) {
  if (row.added)
    return (
      <Badge variant="light" color="blue" c="dark.7">
        new, not saved
      </Badge>
    );
  if (row.changed)
    return (
      <Badge variant="light" color="blue" c="dark.7">
        changed, not saved
      </Badge>
    );
  if (!row.carried)
    return (
      <Text size="xs">
        Not synced: {row.takenBy ?? 'another field'} uses its property. Pick another property to sync it
        again.
      </Text>
    );
  if (row.custom) return <Text size="xs">Custom field</Text>;
  return (
    <Text size="xs" c="dimmed">
      {row.property === row.defaultProperty ? 'Default' : `Mapped (default ${row.defaultProperty})`}
    </Text>
  );
}

interface RowParts {
  label: string;
  select: React.ReactNode;
  state: React.ReactNode;
  action: React.ReactNode;
}

/** One entity type's fields and the property each is read from and written to: a table, or cards on a phone. */
export function MappingsTable({
  rows,
  properties,
  problems,
  onChange,
  onReset,
}: {
  rows: readonly MappingRow[];
  properties: PropertyList | undefined;
  problems: ReadonlyMap<string, string>;
  onChange: (row: MappingRow, property: string) => void;
  onReset: (row: MappingRow) => void;
}) {
  const wide = useMediaQuery('(min-width: 48em)', true);
  const usedBy = useMemo(() => new Map(rows.map((r) => [r.property, labelOf(r)])), [rows]);
  const parts = (row: MappingRow): RowParts => {
    const label = labelOf(row);
    const accepted = properties
      ? row.custom
        ? properties.customFieldTypes
        : (properties.fieldTypes[row.field] ?? properties.customFieldTypes)
      : undefined;
    const canReset = row.custom || (row.defaultProperty !== null && row.property !== row.defaultProperty);
    return {
      label,
      select: (
        <PropertySelect
          aria-label={`Property for ${label}`}
          properties={properties?.properties}
          accepted={accepted}
          usedBy={usedBy}
          value={row.property}
          onChange={(property) => onChange(row, property)}
          error={problems.get(row.key)}
        />
      ),
      state: <RowState row={row} />,
      action: canReset && (
        <Tooltip label={row.custom ? `Remove ${label}` : `Back to ${row.defaultProperty}`}>
          <ActionIcon
            variant="subtle"
            color="gray"
            c="dark.6"
            onClick={() => onReset(row)}
            aria-label={
              row.custom ? `Remove custom field ${label}` : `Reset ${label} to its default property`
            }
          >
            {row.custom ? '✕' : '↺'}
          </ActionIcon>
        </Tooltip>
      ),
    };
  };
  const name = (row: MappingRow, label: string) => (
    <Stack gap={0}>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      {label !== row.field && (
        <Text size="xs" c="dimmed">
          {row.field}
        </Text>
      )}
    </Stack>
  );

  if (!wide)
    return (
      <Stack
        component="ul"
        gap="sm"
        p={0}
        m={0}
        style={{ listStyle: 'none' }}
        aria-label="Fields and their properties"
      >
        {rows.map((row) => {
          const p = parts(row);
          return (
            <Paper
              key={row.key}
              component="li"
              withBorder
              p="sm"
              radius="md"
              data-field={row.key}
              data-invalid={problems.has(row.key) || undefined}
            >
              <Stack gap="xs">
                <Group justify="space-between" wrap="nowrap" gap="xs">
                  {name(row, p.label)}
                  {p.action}
                </Group>
                {p.select}
                {p.state}
              </Stack>
            </Paper>
          );
        })}
      </Stack>
    );

  return (
    <Table verticalSpacing="sm" aria-label="Fields and their properties">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Field</Table.Th>
          <Table.Th>HubSpot property</Table.Th>
          <Table.Th>State</Table.Th>
          <Table.Th>
            <VisuallyHidden>Actions</VisuallyHidden>
          </Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => {
          const p = parts(row);
          return (
            <Table.Tr key={row.key} data-field={row.key} data-invalid={problems.has(row.key) || undefined}>
              <Table.Td>{name(row, p.label)}</Table.Td>
              <Table.Td miw={240}>{p.select}</Table.Td>
              <Table.Td>{p.state}</Table.Td>
              <Table.Td>{p.action && <Group justify="flex-end">{p.action}</Group>}</Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}
