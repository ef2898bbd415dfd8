/**
 * `langgraph-guards`: the guards as LangGraph pieces (tool node, escalation, loop detection, repeat-query router),
 * their state channels, events and options, and the file tools; its types need only the required peers. Subpaths:
 * `/middleware` (createAgent; needs `langchain`), `/core` (pure functions), `/classes`, `/fs`, `/replay`, `/testing`.
 *
 * @module langgraph-guards
 */

export { type GuardHook, guardHooks } from "./channels/hooks.js";
export { GuardMessagesState, GuardState, guardMessagesStateSchema, guardStateSchema } from "./channels/index.js";
export { guardSpanEvents, type SpanAttributeValue, type SpanEventTarget } from "./common/events/span-events.js";
// GUARD_EVENT_VERSION is exported from langgraph-guards/core only
export {
  type GuardLog,
  type GuardLogUpdate,
  type GuardStreamEvent,
  type GuardStreamEventKind,
  isGuardStreamEvent,
} from "./common/events/stream-events.js";
export { type GuardLogger, GuardOptionsError } from "./common/options.js";
export { type GuardChannel, GuardStateError } from "./common/state-error.js";
export type { BlockRule, GuardArtifact, ServedArtifact, StopReason } from "./common/vocabulary.js";
// Also at langgraph-guards/fs
export { createFileTools, type FileToolsOptions } from "./fs/index.js";
export type { LoopState, SafetyOptions, TaskSpending, TokenUsage } from "./loop/core/loop.js";
export type { TaskBudget } from "./loop/core/task-budget.js";
export {
  defaultTurnOutput,
  type LoopDetectNodeOptions,
  type LoopDetectOptions,
  loopDetectHook,
  loopDetectNode,
} from "./loop/graph.js";
export { isLimitInterrupt, type LimitInterrupt } from "./loop/limit-ask.js";
export type { LimitAsk } from "./loop/options.js";
export {
  type RepeatQueryGuard,
  type RepeatQueryGuardOptions,
  repeatQueryGuard,
} from "./repeat-query/guard.js";
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
} from "./repeat-query/router.js";
// The other feedback texts are in langgraph-guards/core
export { defaultRepeatHint, type RepeatHintInfo } from "./repeat-query/texts.js";
export { type StackShape, smallestRecursionLimit } from "./run-end/budget.js";
export { type EscalationInterrupt, type EscalationResume, isEscalationInterrupt } from "./run-end/interrupt.js";
export {
  type GuardCounter,
  type GuardMeter,
  type GuardMetricAttributes,
  type GuardMetricCounts,
  type GuardMetricName,
  type GuardMetrics,
  type GuardMetricsOptions,
  guardMetrics,
} from "./run-end/metrics.js";
export { type GuardVerdict, guardVerdict } from "./run-end/verdict.js";
export type { WrapUpModel, WrapUpOption } from "./run-end/wrap-up.js";
export type { EscalationOptions } from "./tool-calls/core/escalation.js";
export type { ToolGuardConfig, ToolGuardOptions } from "./tool-calls/core/options.js";
export type { MessageTemplate } from "./tool-calls/core/rules.js";
export type { GuardStats, ToolGuardState, ToolGuardUpdate } from "./tool-calls/core/state.js";
export type { ObservedBlock } from "./tool-calls/core/state-events.js";
export type { BlockContext } from "./tool-calls/core/texts.js";
export { GuardEscalationError, GuardStateMissingError } from "./tool-calls/errors.js";
export {
  type EscalationGraphState,
  type EscalationHookOptions,
  type EscalationNodeOptions,
  escalationHook,
  escalationNode,
} from "./tool-calls/escalation-hook.js";
export {
  type GuardableTool,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  type GuardPlan,
} from "./tool-calls/tool-node.js";
