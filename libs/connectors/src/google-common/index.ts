export { constantTimeEqual } from './constant-time';
export {
  DEFAULT_RETRY,
  type GoogleCallError,
  googleCall,
  googleRootUrl,
  type RetryPolicy,
} from './google-call';
export { type GoogleFailure, mapGoogleError, toGoogleFailure } from './google-error.mapper';
export {
  type GoogleOAuthClientConfig,
  googleTokenRefresher,
  type RefreshedGoogleToken,
  refreshGoogleAccessToken,
} from './google-token-refresh';
export { header } from './webhook-headers';
