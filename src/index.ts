export * from "./core/index.js";
export {
  type CachedFile,
  emptyFileCache,
  type FileCacheState,
  type FileCacheStats,
  type FileCacheWrite,
  reduceFileCache,
} from "./fs/cache.js";
export { createSandbox, type PathRefusal, type ResolvedPath, type Sandbox, type SandboxOptions } from "./fs/sandbox.js";
export { createFileTools, type FileToolArtifact, type FileToolsLogger, type FileToolsOptions } from "./fs/tools.js";
export { DEFAULT_IGNORED, type DirNode, type DirTree } from "./fs/tree.js";
export * from "./graph/escalation.js";
export * from "./graph/hooks.js";
export * from "./graph/loop-detect.js";
export * from "./graph/repeat-query.js";
export * from "./graph/tool-node.js";
export {
  type ReadRunsResult,
  type ReplayFormat,
  ReplayInputError,
  readRuns,
  runFromMessages,
} from "./replay/formats.js";
export {
  addTotals,
  emptyTotals,
  type RecordedCall,
  type ReplayDecision,
  type ReplayOptions,
  type ReplayResult,
  type ReplayRun,
  type ReplayStep,
  type ReplayToolCall,
  type ReplayTotals,
  rates,
  recordedCalls,
  replayGuards,
} from "./replay/replay.js";
export { SUMMARY_LEGEND, type SummaryRow, summaryTable } from "./replay/report.js";
export * from "./state/index.js";
