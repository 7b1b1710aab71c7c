import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { MicrosoftTodoContractHarness } from './microsoft-todo.contract-harness';

describeConnectorContract(
  () =>
    new MicrosoftTodoContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-mstodo-${randomBytes(4).toString('hex')}`,
    }),
);
