import { describeConnectorContract } from '../contract/contract-suite';
import { GoogleCalendarContractHarness } from './google-calendar.contract-harness';

describeConnectorContract(() => new GoogleCalendarContractHarness());
