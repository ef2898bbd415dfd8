/**
 * `langgraph-guards/classes`: the specs' classes, for use without a graph and for parity with the specs' examples
 * (state serialisable with `toJSON()` / `fromJSON()`). Each wraps the same pure functions the graph pieces run.
 *
 * @module langgraph-guards/classes
 */

export { StatefulGuard } from "../common/stateful-guard.js";
export { SafetyGuard, type SafetyOptions } from "../loop/core/loop.js";
export { DuplicateHandler, type DuplicateHandlerOptions, type DuplicateState } from "../tool-calls/core/feedback.js";
export { OperationContext, type OperationContextOptions } from "../tool-calls/core/redundancy.js";
export {
  type RepetitionEvaluation,
  ToolRepetitionDetector,
  type ToolRepetitionDetectorOptions,
} from "../tool-calls/core/repetition.js";
