import { ActionIcon, Badge, Group, Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
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

/** One entity type's fields and the property each is read from and written to. */
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
  return (
    <Table.ScrollContainer minWidth={560}>
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
            const label = labelOf(row);
            const problem = problems.get(row.key);
            const accepted = properties
              ? row.custom
                ? properties.customFieldTypes
                : (properties.fieldTypes[row.field] ?? properties.customFieldTypes)
              : undefined;
            const canReset =
              row.custom || (row.defaultProperty !== null && row.property !== row.defaultProperty);
            return (
              <Table.Tr key={row.key} data-field={row.key} data-invalid={problem !== undefined || undefined}>
                <Table.Td>
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
                </Table.Td>
                <Table.Td miw={240}>
                  <PropertySelect
                    aria-label={`Property for ${label}`}
                    properties={properties?.properties}
                    accepted={accepted}
                    value={row.property}
                    onChange={(property) => onChange(row, property)}
                    error={problem}
                  />
                </Table.Td>
                <Table.Td>
                  <RowState row={row} />
                </Table.Td>
                <Table.Td>
                  {canReset && (
                    <Group justify="flex-end">
                      <Tooltip label={row.custom ? `Remove ${label}` : `Back to ${row.defaultProperty}`}>
                        <ActionIcon
                          variant="subtle"
                          color="gray"
                          c="dark.6"
                          onClick={() => onReset(row)}
                          aria-label={
                            row.custom
                              ? `Remove custom field ${label}`
                              : `Reset ${label} to its default property`
                          }
                        >
                          {row.custom ? '✕' : '↺'}
                        </ActionIcon>
                      </Tooltip>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
