import { Paper, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';

export interface ChartTable {
  caption: string;
  columns: readonly string[];
  rows: readonly (readonly (string | number | null)[])[];
}

/**
 * A chart with a title and a one-line summary that say what it shows; the drawing is hidden
 * from assistive technology, which reads the summary and the values as a table instead.
 */
export function ChartFigure({
  id,
  title,
  summary,
  table,
  controls,
  children,
}: {
  id: string;
  title: string;
  summary: string;
  table: ChartTable;
  /** What the chart shows is chosen with (a select): outside the hidden drawing, so it stays usable. */
  controls?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Paper
      component="figure"
      withBorder
      p="md"
      radius="md"
      m={0}
      aria-labelledby={`${id}-title`}
      data-chart={id}
    >
      <Stack gap="xs">
        <div>
          <Title order={3} size="h5" id={`${id}-title`}>
            {title}
          </Title>
          <Text component="figcaption" size="sm" c="dimmed">
            {summary}
          </Text>
        </div>
        {controls}
        <div aria-hidden="true">{children}</div>
        <VisuallyHidden>
          <Table>
            <caption>{table.caption}</caption>
            <thead>
              <tr>
                {table.columns.map((column) => (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, i) => (
                <tr key={String(row[0] ?? i)}>
                  {row.map((cell, j) => (
                    <td key={j}>{cell ?? '—'}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </Table>
        </VisuallyHidden>
      </Stack>
    </Paper>
  );
}
