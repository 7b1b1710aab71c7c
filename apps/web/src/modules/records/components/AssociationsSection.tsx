import { Anchor, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { EmptyState } from '../../../ui/EmptyState';
import type { Association, RecordType } from '../api';
import { providerName, TYPE_LABEL } from '../utils/format';

const GROUPS: readonly { type: Association['type']; title: string }[] = [
  { type: 'company', title: 'Companies' },
  { type: 'person', title: 'People' },
  { type: 'deal', title: 'Deals' },
];

/** "from HubSpot", or "derived from acme.com (ana@acme.com)": each thing that says the two belong together. */
export function associationSourceWords(sources: Association['sources']): string {
  const words = sources.map((source) =>
    source.kind === 'derived'
      ? `derived from ${source.evidence?.domain ?? 'the email domain'}`
      : `from ${providerName(source.provider)}`,
  );
  return [...new Set(words)].join(', ');
}

function AssociationChip({ association }: { association: Association }) {
  const name = association.displayName ?? `Unnamed ${TYPE_LABEL[association.type].toLowerCase()}`;
  const sources = associationSourceWords(association.sources);
  const derived = association.sources.find((source) => source.kind === 'derived')?.evidence;
  return (
    <Paper
      withBorder
      radius="xl"
      px="sm"
      py={4}
      component="li"
      style={{ listStyle: 'none', maxWidth: '100%' }}
    >
      <Group gap={6} wrap="wrap">
        <Anchor
          size="sm"
          fw={600}
          renderRoot={(props) =>
            association.type === 'person' ? (
              <Link to="/people/$id" params={{ id: association.id }} {...props} />
            ) : association.type === 'company' ? (
              <Link to="/companies/$id" params={{ id: association.id }} {...props} />
            ) : (
              <Link to="/deals/$id" params={{ id: association.id }} {...props} />
            )
          }
        >
          {name}
        </Anchor>
        <Text size="xs" c="dimmed" title={derived ? `from the address ${derived.email}` : undefined}>
          {sources}
        </Text>
      </Group>
    </Paper>
  );
}

/** A person's company and deals, a company's people and deals, a deal's people and company. */
export function AssociationsSection({
  type,
  associations,
}: {
  type: RecordType;
  associations: Association[];
}) {
  return (
    <section aria-labelledby="associations-title">
      <Title order={2} size="h4" id="associations-title" mb="xs">
        Associations
      </Title>
      {associations.length === 0 ? (
        <EmptyState title="No associations">
          No connected system associates this {TYPE_LABEL[type].toLowerCase()} with a person, company or deal.
        </EmptyState>
      ) : (
        <Stack gap="sm">
          {GROUPS.map(({ type: groupType, title }) => {
            const items = associations.filter((association) => association.type === groupType);
            if (items.length === 0) return null;
            return (
              <div key={groupType}>
                <Text size="xs" fw={600} c="dimmed" id={`associations-${groupType}`} mb={4}>
                  {title}
                </Text>
                <Group
                  component="ul"
                  gap="xs"
                  aria-labelledby={`associations-${groupType}`}
                  p={0}
                  m={0}
                  wrap="wrap"
                >
                  {items.map((association) => (
                    <AssociationChip key={association.id} association={association} />
                  ))}
                </Group>
              </div>
            );
          })}
        </Stack>
      )}
    </section>
  );
}
