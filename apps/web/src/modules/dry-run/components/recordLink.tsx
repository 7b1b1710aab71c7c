import { Text } from '@mantine/core';
import { AnchorLink } from '../../../ui/AnchorLink';

/** A unified record's name, linked to its page where the app has one (people, companies, deals). */
export function RecordName({
  entityType,
  entityId,
  name,
}: {
  entityType: string;
  entityId: string;
  name: string | null;
}) {
  const label = name ?? 'Unnamed';
  const params = { id: entityId };
  switch (entityType) {
    case 'person':
      return (
        <AnchorLink to="/people/$id" params={params} size="sm">
          {label}
        </AnchorLink>
      );
    case 'company':
      return (
        <AnchorLink to="/companies/$id" params={params} size="sm">
          {label}
        </AnchorLink>
      );
    case 'deal':
      return (
        <AnchorLink to="/deals/$id" params={params} size="sm">
          {label}
        </AnchorLink>
      );
    default:
      return <Text size="sm">{label}</Text>;
  }
}
