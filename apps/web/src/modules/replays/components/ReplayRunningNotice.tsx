import { Alert, Text } from '@mantine/core';
import { describeError } from '../../../api/errors';
import { AnchorLink } from '../../../ui/AnchorLink';
import { runningReplayId } from '../utils/replay-view';

/**
 * Why a replay did not start. One runs at a time: a 409 `replay_running` links to the one in
 * the way, to follow it and try again once it is done.
 */
export function ReplayStartError({ error }: { error: unknown }) {
  const running = runningReplayId(error);
  if (running !== null)
    return (
      <Alert color="yellow" variant="outline" title="Another replay is underway" role="alert">
        <Text size="sm">
          One replay runs at a time.{' '}
          <AnchorLink to="/admin/replays/$id" params={{ id: running }}>
            Follow the running replay
          </AnchorLink>{' '}
          and start this one when it has finished.
        </Text>
      </Alert>
    );
  const { title, message } = describeError(error);
  return (
    <Alert color="red" variant="outline" title={title} role="alert">
      <Text size="sm">{message}</Text>
    </Alert>
  );
}
