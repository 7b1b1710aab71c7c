import { Button, Group, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import type { PropertyList } from '../api';
import { CUSTOM_FIELD_NAME } from '../utils/draft';
import { ERROR_CONTRAST, PropertySelect } from './PropertySelect';

/** A new field outside the unified vocabulary, carried as text by a property of the portal. */
export function AddCustomField({
  properties,
  taken,
  onAdd,
}: {
  properties: PropertyList | undefined;
  /** Field names the type already has. */
  taken: ReadonlySet<string>;
  onAdd: (field: string, property: string) => void;
}) {
  const [name, setName] = useState('');
  const [property, setProperty] = useState<string | null>(null);
  const [tried, setTried] = useState(false);
  const nameError =
    name === ''
      ? 'Give the field a name'
      : !CUSTOM_FIELD_NAME.test(name)
        ? 'A letter, then letters, digits or _ (at most 64)'
        : taken.has(name)
          ? 'This type already has a field by that name'
          : null;
  const propertyError = property === null ? 'Pick the property that carries it' : null;
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="add-custom-field">
      <Stack gap="sm">
        <Title order={2} size="h5" id="add-custom-field">
          Add a custom field
        </Title>
        <Text size="sm" c="dimmed">
          Syncs a property the unified fields do not cover, as text. Policies and record edits can then name
          it.
        </Text>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setTried(true);
            if (nameError !== null || property === null) return;
            onAdd(name, property);
            setName('');
            setProperty(null);
            setTried(false);
          }}
        >
          <Group align="flex-start" wrap="wrap" gap="sm">
            <TextInput
              label="Field name"
              placeholder="leadScore"
              value={name}
              onChange={(event) => setName(event.currentTarget.value.trim())}
              error={tried ? nameError : null}
              style={{ ...ERROR_CONTRAST, flex: '1 1 180px' }}
            />
            <PropertySelect
              label="Property"
              placeholder="Search the portal's properties"
              properties={properties?.properties}
              accepted={properties?.customFieldTypes}
              value={property}
              onChange={setProperty}
              error={tried ? propertyError : null}
              style={{ flex: '2 1 240px' }}
            />
            <Button type="submit" variant="default" mt={{ base: 0, sm: 25 }}>
              Add field
            </Button>
          </Group>
        </form>
      </Stack>
    </Paper>
  );
}
