export { constantTimeEqual } from '../shared/constant-time';
export { identifyGoogleAccount } from './google-account';
export {
  DEFAULT_RETRY,
  type GoogleCallError,
  googleCall,
  googleRootUrl,
  type RetryPolicy,
} from './google-call';
export { type GoogleFailure, mapGoogleError, toGoogleFailure } from './google-error.mapper';
export { header } from './webhook-headers';
