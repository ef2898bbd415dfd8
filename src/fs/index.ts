/**
 * The file tools (`read_file`, `list_files`, `write_to_file`, `apply_source_code_diff`, `execute_command`) with
 * their sandbox, and the file cache they keep in graph state.
 *
 * @module langgraph-guards/fs
 */

export type { GuardLogger } from "../common/options.js";
export type { CachedFile, FileCacheState, FileCacheStats, FileCacheWrite } from "./cache.js";
export { emptyFileCache, reduceFileCache } from "./cache.js";
export type { FileToolArtifact } from "./kit.js";
export type { FileToolsOptions } from "./options.js";
export { createSandbox, type PathRefusal, type ResolvedPath, type Sandbox, type SandboxOptions } from "./sandbox.js";
export { createFileTools } from "./tools.js";
export { DEFAULT_IGNORED, type DirNode, type DirTree } from "./tree.js";
