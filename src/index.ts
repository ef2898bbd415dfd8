/**
 * `langgraph-guards`: the guards as LangGraph pieces (the tool node, escalation, loop detection, the repeat-query
 * router), as createAgent middleware, their state channels, events and options, and the classes that work without
 * a graph. More at the subpaths:
 * `langgraph-guards/core` (the pure functions the pieces are built on), `/fs` (cache-serving file tools), `/replay`
 * (recorded runs through the guards), `/testing` (a scripted chat model).
 *
 * @module langgraph-guards
 */

// The tool node and what it writes
export type { GuardArtifact } from "./agent/answers.js";
export { type EscalationInterrupt, type EscalationResume, isEscalationInterrupt } from "./agent/interrupt.js";
export type { EscalationOptions } from "./core/escalation.js";
// Without a graph: the classes of the specs, call identity, similarity, queries
export { DuplicateHandler, type DuplicateHandlerOptions } from "./core/feedback.js";
export {
  type LoopState,
  SafetyGuard,
  type SafetyOptions,
  type StopReason,
  type TokenUsage,
} from "./core/loop.js";
export type { BlockContext, BlockRule, MessageTemplate } from "./core/messages.js";
// Options
export { GuardOptionsError, type ToolGuardConfig, type ToolGuardOptions } from "./core/options.js";
export { normalizeQuery, parseJsonishQuery } from "./core/query.js";
export { OperationContext, type OperationContextOptions } from "./core/redundancy.js";
export {
  type RepetitionEvaluation,
  ToolRepetitionDetector,
  type ToolRepetitionDetectorOptions,
} from "./core/repetition.js";
export { type SignatureOptions, toolCallSignature } from "./core/signature.js";
export { isSimilar, partialRatio, similarityRatio, tokenSortRatio } from "./core/similarity.js";
export type { GuardStats, ObservedBlock, ToolGuardState } from "./core/state.js";
// Guard events (custom stream and the guardLog channel)
export {
  GUARD_EVENT_VERSION,
  type GuardLog,
  type GuardStreamEvent,
  type GuardStreamEventKind,
  isGuardStreamEvent,
} from "./core/stream-events.js";
// Also at their own entry points (langgraph-guards/fs, langgraph-guards/replay)
export { createFileTools, type FileToolsOptions } from "./fs/index.js";
export { GuardEscalationError, GuardStateMissingError } from "./graph/errors.js";
// Escalation levels 3 and 4 in a graph
export {
  type EscalationGraphState,
  type EscalationHookOptions,
  type EscalationNodeOptions,
  escalationHook,
  escalationNode,
} from "./graph/escalation.js";
export { type GuardHook, guardHooks } from "./graph/hooks.js";
// Loop detection and safety limits
export {
  defaultTurnOutput,
  type LoopDetectNodeOptions,
  type LoopDetectOptions,
  loopDetectHook,
  loopDetectNode,
} from "./graph/loop-detect.js";
// The repeat-query router
export {
  clearRetrievalQueries,
  defaultQueryPayload,
  type RepeatQueryRouter,
  type RepeatQueryRouterOptions,
  type RepeatQueryState,
  type RetrievalQueryUpdate,
  recordRetrievalQuery,
  repeatQueryRouter,
  withQueryHistory,
} from "./graph/repeat-query.js";
export {
  defaultRepeatHint,
  type RepeatHintInfo,
  type RepeatQueryGuard,
  type RepeatQueryGuardOptions,
  repeatQueryGuard,
} from "./graph/repeat-query-guard.js";
export {
  type GuardableTool,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  type GuardPlan,
} from "./graph/tool-node.js";
// createAgent middleware (also at langgraph-guards/middleware; langchain is not loaded at run time)
export {
  fileToolsMiddleware,
  type GuardMiddlewareOptions,
  guardMiddleware,
  loopDetectMiddleware,
  type SafetyLimitsOptions,
  safetyLimitsMiddleware,
} from "./middleware/index.js";
export { type ReplayOptions, type ReplayResult, type ReplayRun, readRuns, replayGuards } from "./replay/index.js";
// State channels
export {
  type GuardLogUpdate,
  GuardMessagesState,
  GuardState,
  guardMessagesStateSchema,
  guardStateSchema,
  type ToolGuardUpdate,
} from "./state/index.js";
