import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { GmailContractHarness } from './gmail.contract-harness';

describeConnectorContract(
  () =>
    new GmailContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-gmail-${randomBytes(4).toString('hex')}`,
    }),
);
