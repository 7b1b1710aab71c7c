import { randomBytes } from 'node:crypto';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { describeConnectorContract } from '../contract/contract-suite';
import { HubspotContractHarness } from './hubspot-contract.harness';

describeConnectorContract(
  () =>
    new HubspotContractHarness({
      redisUrl: TEST_REDIS_URL,
      redisPrefix: `${TEST_REDIS_PREFIX}:connectors-hubspot-${randomBytes(4).toString('hex')}`,
    }),
);
