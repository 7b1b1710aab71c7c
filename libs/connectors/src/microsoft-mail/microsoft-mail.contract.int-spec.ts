import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { MicrosoftMailContractHarness } from './microsoft-mail.contract-harness';

describeConnectorContract(
  () =>
    new MicrosoftMailContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-microsoft-mail-${randomBytes(4).toString('hex')}`,
    }),
);
