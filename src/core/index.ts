/**
 * The framework-free core (no LangGraph import): call identity, read-only classification, similarity, queries, and
 * the guards as pure functions over plain state (what the graph pieces, the middleware and replay run). The specs'
 * classes are at `langgraph-guards/classes`.
 *
 * @module langgraph-guards/core
 */

export {
  emptyGuardLog,
  GUARD_EVENT_VERSION,
  GUARD_LOG_LIMIT,
  type GuardLog,
  type GuardStreamEvent,
  type GuardStreamEventKind,
  guardStreamEvent,
  isGuardStreamEvent,
  reduceGuardLog,
  stopStreamEvent,
} from "../common/events/stream-events.js";
export {
  type CallEffect,
  type ClassifyOptions,
  classifyCall,
  isReadOnlyCall,
  isStatefulCall,
  letsTimePass,
  type ToolTraits,
} from "../common/identity/classify.js";
export { normalizeResult } from "../common/identity/normalize.js";
export { isReadOnlyCommand } from "../common/identity/shell/index.js";
export { canonicalJson, type SignatureOptions, toolCallSignature } from "../common/identity/signature.js";
export { type GuardLogger, GuardOptionsError } from "../common/options.js";
export {
  isSimilar,
  partialRatio,
  similarityRatio,
  similarityScore,
  tokenSortRatio,
} from "../common/similarity/similarity.js";
export type { BlockRule, StopKind, StopReason } from "../common/vocabulary.js";
export {
  addUsage,
  checkLimits,
  costOf,
  detectLoopIn,
  emptyLoopState,
  type LoopCheck,
  type LoopState,
  type LoopTurn,
  type PriceTable,
  type ResolvedSafetyOptions,
  resolveSafetyOptions,
  type SafetyOptions,
  type Scorer,
  stepLoopGuard,
  type TokenUsage,
} from "../loop/core/loop.js";
export {
  decideRepeatQuery,
  extractQuery,
  MAX_ASKED_QUERIES,
  normalizeQuery,
  parseJsonish,
  parseJsonishQuery,
  QUERY_PARSERS,
  type QueryParserName,
  unionQueries,
} from "../repeat-query/core/query.js";
export type {
  AnswerNow,
  CallFacts,
  CallOutcome,
  DecideContext,
  RepeatKind,
  ToolCallInput,
} from "../tool-calls/core/call.js";
export { decideToolCall, type ToolCallDecision } from "../tool-calls/core/decide.js";
export { type Detection, detectCall, identifyCall } from "../tool-calls/core/detect.js";
export { unchangedNote } from "../tool-calls/core/earlier.js";
export {
  type ArgsView,
  type BlockedCall,
  blockedCall,
  type CallLike,
  DEFAULT_ACKNOWLEDGMENT_PATTERNS,
  DEFAULT_RETRY_PATTERNS,
  type EscalationEvent,
  type EscalationOptions,
  type EscalationState,
  emptyEscalationState,
  escalationOptionsSchema,
  levelFor,
  matchesBlocked,
  type ResolvedEscalationOptions,
  type ResponseInput,
  reduceEscalation,
  repeatsBlocked,
  responseAcknowledges,
  sameInSubstance,
  substanceKey,
  textAcknowledges,
} from "../tool-calls/core/escalation.js";
export { FILE_EDITS_LIMIT, type FileEditCount, type FileEditsFinding } from "../tool-calls/core/file-edits.js";
export type { ResultNormalizer } from "../tool-calls/core/options.js";
export {
  type ResolvedToolGuardOptions,
  resolveToolGuardOptions,
  type ToolGuardConfig,
  type ToolGuardOptions,
} from "../tool-calls/core/options.js";
export {
  answerReminder,
  commitTurn,
  planToolCalls,
  planTurn,
  type TurnInput,
  type TurnPlan,
  type TurnStop,
} from "../tool-calls/core/plan.js";
export type {
  FileOperation,
  OperationLimits,
  OperationRecord,
  OperationsState,
} from "../tool-calls/core/redundancy.js";
export type { RepeatCount, RepeatState } from "../tool-calls/core/repeat-ceiling.js";
export type {
  CallRecord,
  Change,
  RecordedResult,
  RepetitionEvaluation,
  RepetitionRules,
  RepetitionState,
} from "../tool-calls/core/repetition.js";
export type { CacheEntry, CacheHit, CacheTerms } from "../tool-calls/core/result-cache.js";
export { BLOCK_RULES, blockMessage, type MessageTemplate } from "../tool-calls/core/rules.js";
export {
  type AnswerRecord,
  emptyToolGuardState,
  type GuardEvent,
  type GuardStats,
  reduceToolGuard,
  type ToolGuardState,
} from "../tool-calls/core/state.js";
export type { ObservedBlock } from "../tool-calls/core/state-events.js";
export type { BlockContext } from "../tool-calls/core/texts.js";
export {
  DEFAULT_MESSAGES,
  duplicateFeedback,
  type EndExplanationInput,
  type EscalationFeedbackInput,
  endExplanation,
  escalationFeedback,
  type FeedbackLimits,
  fileEditsReminder,
  missingHookMessage,
  notRunAnswer,
  reminderFeedback,
  userQuestion,
  withNoteAfter,
} from "../tool-calls/core/texts.js";
export { escalationStreamEvent, turnStreamEvents } from "../tool-calls/events.js";
