/**
 * `langgraph-guards`: the guards as LangGraph pieces (the tool node, escalation, loop detection, the repeat-query
 * router), their state channels, events and options, and the file tools. Its types need only the required peers.
 * More at the subpaths: `langgraph-guards/middleware` (createAgent; needs `langchain`), `/core` (the pure functions
 * the pieces are built on: call identity, similarity, queries), `/classes` (the specs' classes, without a graph),
 * `/fs` (file tools and sandbox), `/replay` (recorded runs through the guards), `/testing` (a scripted chat model).
 *
 * @module langgraph-guards
 */

export { type GuardHook, guardHooks } from "./channels/hooks.js";
// State channels
export { GuardMessagesState, GuardState, guardMessagesStateSchema, guardStateSchema } from "./channels/index.js";
// Guard events as OpenTelemetry span events (a callback handler)
export { guardSpanEvents, type SpanAttributeValue, type SpanEventTarget } from "./common/events/span-events.js";
// Guard events (custom stream and the guardLog channel); GUARD_EVENT_VERSION is in langgraph-guards/core
export {
  type GuardLog,
  type GuardLogUpdate,
  type GuardStreamEvent,
  type GuardStreamEventKind,
  isGuardStreamEvent,
} from "./common/events/stream-events.js";
// Options
export { type GuardLogger, GuardOptionsError } from "./common/options.js";
// A guard channel that holds a value the guards cannot read (named, with how to reset it)
export { type GuardChannel, GuardStateError } from "./common/state-error.js";
export type { BlockRule, GuardArtifact, ServedArtifact, StopReason } from "./common/vocabulary.js";
// Also at their own entry points (langgraph-guards/fs, langgraph-guards/replay)
export { createFileTools, type FileToolsOptions } from "./fs/index.js";
export type { LoopState, SafetyOptions, TaskSpending, TokenUsage } from "./loop/core/loop.js";
export type { TaskBudget } from "./loop/core/task-budget.js";
// Loop detection and safety limits
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
} from "./repeat-query/router.js";
// The repeat-query guard's default hint (with every feedback text, in the core)
export { defaultRepeatHint, type RepeatHintInfo } from "./repeat-query/texts.js";
// The run's end: the step budget, limits that ask, the wrap-up, and why a run stopped
export { type StackShape, smallestRecursionLimit } from "./run-end/budget.js";
export { type EscalationInterrupt, type EscalationResume, isEscalationInterrupt } from "./run-end/interrupt.js";
// Metrics: counts of what the guards did, and OpenTelemetry counters (a callback handler)
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
// The tool node and what it writes
export type { EscalationOptions } from "./tool-calls/core/escalation.js";
export type { ToolGuardConfig, ToolGuardOptions } from "./tool-calls/core/options.js";
export type { MessageTemplate } from "./tool-calls/core/rules.js";
export type { GuardStats, ToolGuardState, ToolGuardUpdate } from "./tool-calls/core/state.js";
export type { ObservedBlock } from "./tool-calls/core/state-events.js";
export type { BlockContext } from "./tool-calls/core/texts.js";
export { GuardEscalationError, GuardStateMissingError } from "./tool-calls/errors.js";
// Escalation levels 3 and 4 in a graph
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
