import { Alert, List, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useRouterState } from '@tanstack/react-router';
import { AnchorLink } from '../../../ui/AnchorLink';
import { providerName } from '../../records/utils/format';
import { adminAttentionQuery } from '../api';

/** Connections named one by one; past that, a count (a workspace of hundreds could have many). */
const SHOWN = 3;

/**
 * For admins: a connection that needs reconnecting or failed, or open dead letters, each with
 * a link to the page where it is fixed (not repeated on that page itself).
 */
export function AdminBanner() {
  const attention = useQuery(adminAttentionQuery);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const data = attention.data;
  if (data === undefined || (data.broken.length === 0 && !data.deadLetters)) return null;
  const onConnections = pathname.startsWith('/admin/connections');
  const onDeadLetters = pathname.startsWith('/admin/dead-letters');
  return (
    <Alert color="orange" variant="outline" title="Syncing needs an admin" mb="md" role="status">
      <List size="sm" spacing={2}>
        {data.broken.slice(0, SHOWN).map((connection) => (
          <List.Item key={connection.id}>
            <Text span size="sm" fw={500}>
              {connection.displayName ??
                `${providerName(connection.provider)} ${connection.externalAccountId}`}
            </Text>{' '}
            {connection.status === 'needs_reauth'
              ? 'needs to be reconnected: its access was revoked or expired.'
              : `stopped with an error${connection.statusReason ? `: ${connection.statusReason}` : ''}.`}{' '}
            {!onConnections && (
              <AnchorLink to="/admin/connections" size="sm">
                Open connections
              </AnchorLink>
            )}
          </List.Item>
        ))}
        {data.broken.length > SHOWN && (
          <List.Item>
            and {data.broken.length - SHOWN} more connection{data.broken.length - SHOWN === 1 ? '' : 's'}{' '}
            {onConnections ? (
              'below.'
            ) : (
              <AnchorLink to="/admin/connections" size="sm">
                Open connections
              </AnchorLink>
            )}
          </List.Item>
        )}
        {data.deadLetters && (
          <List.Item>
            Some changes could not be applied and wait in the dead letters for a retry.{' '}
            {!onDeadLetters && (
              <AnchorLink to="/admin/dead-letters" search={{}} size="sm">
                Open dead letters
              </AnchorLink>
            )}
          </List.Item>
        )}
      </List>
    </Alert>
  );
}
