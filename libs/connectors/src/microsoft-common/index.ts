export {
  DEFAULT_RETRY,
  type GraphCallError,
  type GraphCallOptions,
  graphCall,
  graphClient,
  type RetryPolicy,
} from './graph-call';
export { type GraphFailure, mapGraphError, toGraphFailure } from './graph-error.mapper';
export {
  type GraphNotification,
  graphNotificationSubscriptions,
  parseGraphNotification,
  readGraphNotifications,
  verifyGraphNotification,
} from './graph-notifications';
export { identifyMicrosoftAccount, microsoftAccountId, PERSONAL_ACCOUNTS_TENANT } from './microsoft-account';
