/**
 * `langgraph-guards/classes`: the specs' classes, for use without a graph and for parity with the specs' examples
 * (state serialisable with `toJSON()` / `fromJSON()`). Each wraps the same pure functions the graph pieces run.
 *
 * @module langgraph-guards/classes
 */
export { DuplicateHandler, type DuplicateHandlerOptions, type DuplicateState } from "../core/feedback.js";
export { SafetyGuard, type SafetyOptions } from "../core/loop.js";
export { OperationContext, type OperationContextOptions } from "../core/redundancy.js";
export {
  type RepetitionEvaluation,
  ToolRepetitionDetector,
  type ToolRepetitionDetectorOptions,
} from "../core/repetition.js";
