export {
  type EntityView,
  type IdentityChange,
  IdentityService,
  type IdentityServiceOptions,
  type JoinsByEvent,
  type Participant,
  type PossibleDuplicateView,
  participantsOf,
  type SourceLinkView,
} from './identity.service';
export { type IdentityError, mergeReasonOf } from './identity-operations';
export { MatchIndex } from './match-index';
export {
  DEFAULT_SETTINGS,
  type IdentitySettings,
  MATCH_KEY_KINDS,
  type MatchKey,
  type MatchKeyKind,
  type MatchRecord,
  toMatchRecord,
} from './match-record';
export {
  companyNameTokens,
  type EmailRules,
  isFreeMailDomain,
  nameTokens,
  normaliseEmail,
  normaliseICalUid,
  normaliseMessageId,
  normalisePhone,
  registrableDomain,
} from './normalise';
export {
  type DismissIntent,
  dismissOperationId,
  IDENTITY_OPERATION_FIELD,
  type IdentityIntent,
  type IdentityLogOperation,
  identityOperationChange,
  identityOperationOf,
  type LinkReason,
  type MergeIntent,
  type MovedLink,
  type OperationPayload,
  providerMergeOf,
  providerMergeOperationId,
  type UnmergeIntent,
} from './operations';
export {
  linkedEntityOf,
  linkRecordOnce,
  proposePossibleDuplicate,
  type RecordRef,
} from './record-links';
export { type Candidate, type Decision, type Resolution, Resolver } from './resolver';
export { jaroWinkler, nameSimilarity } from './similarity';
export { entityIdFor, joinOperationIdFor, possibleDuplicateIdFor, uuidV5 } from './stable-id';
export {
  findSuspectEntities,
  type SuspectEntity,
  type SuspectProblem,
  type SuspectRemedy,
} from './suspects';
