import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { MicrosoftCalendarContractHarness } from './microsoft-calendar.contract-harness';

describeConnectorContract(
  () =>
    new MicrosoftCalendarContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-mscal-${randomBytes(4).toString('hex')}`,
    }),
);
