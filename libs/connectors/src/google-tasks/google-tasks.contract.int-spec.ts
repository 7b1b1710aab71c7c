import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { GoogleTasksContractHarness } from './google-tasks.contract-harness';

describeConnectorContract(
  () =>
    new GoogleTasksContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-gtasks-${randomBytes(4).toString('hex')}`,
    }),
);
