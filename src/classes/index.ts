/**
 * `langgraph-guards/classes`: the specs' classes, for use without a graph and for parity with the specs' examples
 * (state serialisable with `toJSON()` / `fromJSON()`). Each wraps the same pure functions the graph pieces run.
 *
 * @module langgraph-guards/classes
 */

export { SafetyGuard, type SafetyOptions } from "../core/loop/loop.js";
export { StatefulGuard } from "../core/stateful-guard.js";
export { DuplicateHandler, type DuplicateHandlerOptions, type DuplicateState } from "../core/tool-calls/feedback.js";
export { OperationContext, type OperationContextOptions } from "../core/tool-calls/redundancy.js";
export {
  type RepetitionEvaluation,
  ToolRepetitionDetector,
  type ToolRepetitionDetectorOptions,
} from "../core/tool-calls/repetition.js";
