import { Badge, Group, Tooltip, VisuallyHidden } from '@mantine/core';
import { toneProps } from './StatusBadge';
import { formatDateTime, relativeTime } from './utils/time';

export interface ProvenanceSource {
  kind: 'connection' | 'user';
  id: string;
  /** The connection's provider or name, or the member's name; the id is shown without one. */
  label?: string | null;
  actorKind?: 'member' | 'apiKey' | null;
}

/** Who set a value (connection or person), when, and whether it won a conflict. */
export function sourceLabel(source: ProvenanceSource): string {
  if (source.label) return source.label;
  if (source.kind === 'connection') return `connection ${source.id.slice(0, 8)}`;
  if (source.actorKind === 'apiKey') return `API key ${source.id.slice(0, 8)}`;
  return `member ${source.id.slice(0, 8)}`;
}

export function ProvenanceBadge({
  source,
  eventTime,
  conflicted,
}: {
  source: ProvenanceSource;
  eventTime: string;
  conflicted: boolean;
}) {
  const who = sourceLabel(source);
  const description = `Set by ${who} ${formatDateTime(eventTime)}${conflicted ? ', won a conflict' : ''}`;
  return (
    <Tooltip label={description} withArrow>
      <Group gap={4} wrap="nowrap" component="span">
        <Badge size="xs" tt="none" {...toneProps(source.kind === 'user' ? 'info' : 'neutral')} aria-hidden>
          {who} · {relativeTime(eventTime)}
        </Badge>
        {conflicted && (
          <Badge size="xs" tt="none" {...toneProps('warning')} aria-hidden>
            won conflict
          </Badge>
        )}
        <VisuallyHidden>{description}</VisuallyHidden>
      </Group>
    </Tooltip>
  );
}
