/**
 * `langgraph-guards/replay`: recorded agent runs replayed through the same turn procedure as the live graph, their
 * input formats, and the summary the `langgraph-guards replay` command prints.
 *
 * @module langgraph-guards/replay
 */
export { type ReadRunsResult, type ReplayFormat, ReplayInputError, readRuns, runFromMessages } from "./formats.js";
export { REPLAY_INPUT_CAPS, type ReadRunsFromFileOptions, readRunsFromFile } from "./input.js";
export type { ReplayInputItem } from "./lines.js";
export {
  type ReplayLoopResult,
  type ReplayOptions,
  type ReplayResult,
  type ReplayRun,
  type ReplayStep,
  type ReplayToolCall,
  replayGuards,
  replayLoopDetector,
} from "./replay.js";
export { SUMMARY_LEGEND, type SummaryRow, summaryTable } from "./report.js";
export type { ReplayDecision } from "./totals.js";
export { addTotals, emptyTotals, type ReplayTotals, rates } from "./totals.js";
