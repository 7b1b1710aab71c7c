import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { GoogleCalendarContractHarness } from './google-calendar.contract-harness';

describeConnectorContract(
  () =>
    new GoogleCalendarContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-gcal-${randomBytes(4).toString('hex')}`,
    }),
);
