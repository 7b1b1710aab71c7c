import { ActionIcon, Box, Group, Paper, Stack, Text, VisuallyHidden } from '@mantine/core';
import { type DragEvent, useState } from 'react';
import { moveItem } from '../utils/policy-draft';

/**
 * A priority order, best first: drag a source onto another's place (native drag and drop,
 * no library: one short list), or move it with its buttons (keyboard and touch). Each move is
 * announced to screen readers.
 */
export function PriorityOrder({
  fieldLabel,
  order,
  nameOf,
  onChange,
}: {
  fieldLabel: string;
  order: readonly string[];
  nameOf: (source: string) => string;
  onChange: (order: string[]) => void;
}) {
  const [dragged, setDragged] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const listLabel = `Priority order for ${fieldLabel}`;

  const move = (from: number, to: number) => {
    if (from === to || to < 0 || to >= order.length) return;
    onChange(moveItem(order, from, to));
    const source = order[from];
    if (source !== undefined)
      setAnnouncement(`${nameOf(source)} is now ${ordinal(to + 1)} of ${order.length} for ${fieldLabel}.`);
  };

  const onDrop = (event: DragEvent, to: number) => {
    event.preventDefault();
    const from = dragged ?? Number(event.dataTransfer.getData('text/plain'));
    setDragged(null);
    setOver(null);
    if (Number.isInteger(from)) move(from, to);
  };

  return (
    <Stack gap={4}>
      <Text size="sm" fw={500} aria-hidden>
        {listLabel} (best first)
      </Text>
      <Box component="ol" m={0} p={0} style={{ listStyle: 'none' }} aria-label={listLabel}>
        {order.map((source, index) => {
          const name = nameOf(source);
          return (
            <Paper
              component="li"
              key={source}
              withBorder
              px="sm"
              py={4}
              mb={4}
              draggable
              data-source={source}
              onDragStart={(event: DragEvent) => {
                setDragged(index);
                event.dataTransfer.effectAllowed = 'move';
                event.dataTransfer.setData('text/plain', String(index));
              }}
              onDragEnd={() => {
                setDragged(null);
                setOver(null);
              }}
              onDragOver={(event: DragEvent) => {
                event.preventDefault();
                event.dataTransfer.dropEffect = 'move';
                setOver(index);
              }}
              onDrop={(event: DragEvent) => onDrop(event, index)}
              style={{
                cursor: 'grab',
                borderColor: over === index && dragged !== index ? 'var(--mantine-color-blue-7)' : undefined,
                opacity: dragged === index ? 0.6 : 1,
              }}
            >
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
                  <Text aria-hidden c="dimmed" size="sm" style={{ userSelect: 'none' }}>
                    ⠿
                  </Text>
                  <Text size="sm" c="dimmed" w={20}>
                    {index + 1}.
                  </Text>
                  <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                    {name}
                  </Text>
                </Group>
                <Group gap={4} wrap="nowrap">
                  <ActionIcon
                    variant="default"
                    size="md"
                    aria-label={`Move ${name} up`}
                    disabled={index === 0}
                    onClick={() => move(index, index - 1)}
                  >
                    <span aria-hidden>↑</span>
                  </ActionIcon>
                  <ActionIcon
                    variant="default"
                    size="md"
                    aria-label={`Move ${name} down`}
                    disabled={index === order.length - 1}
                    onClick={() => move(index, index + 1)}
                  >
                    <span aria-hidden>↓</span>
                  </ActionIcon>
                </Group>
              </Group>
            </Paper>
          );
        })}
      </Box>
      <VisuallyHidden aria-live="polite">{announcement}</VisuallyHidden>
    </Stack>
  );
}

const ordinal = (n: number): string => {
  const suffix =
    n % 10 === 1 && n % 100 !== 11
      ? 'st'
      : n % 10 === 2 && n % 100 !== 12
        ? 'nd'
        : n % 10 === 3 && n % 100 !== 13
          ? 'rd'
          : 'th';
  return `${n}${suffix}`;
};
