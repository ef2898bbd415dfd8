/** `createFileTools`: the one factory of the file tools (each tool has its own module). */
import type { DynamicStructuredTool } from "@langchain/core/tools";
import { executeCommandTool } from "./command.js";
import { createToolKit } from "./kit.js";
import { listFilesTool } from "./list-files.js";
import type { FileToolsOptions } from "./options.js";
import { readFileTool } from "./read-file.js";
import { applyDiffTool, writeToFileTool } from "./write.js";

export type { FileToolArtifact } from "./kit.js";
export type { FileToolsOptions } from "./options.js";

/**
 * Creates the file tools over a sandboxed project root: `read_file`, `list_files`, `write_to_file`,
 * `apply_source_code_diff`, and `execute_command` with `allowCommands: true`. In a graph whose state has the
 * `fileCache` channel (`GuardState`), the digests and stats of the files read (no contents) and the directory tree
 * are kept in state, per thread; a repeat read of unchanged content answers with a reference to the earlier result
 * while that result is still in `messages`. Paths are confined to `root` after resolving symlinks. A bad option, or a
 * root that does not exist or is not a folder, throws `GuardOptionsError` here. Typed with `@langchain/core`'s
 * `DynamicStructuredTool`, so that the types need no `langchain`.
 *
 * @example
 * ```ts
 * const tools = createFileTools({ root: "/repo" });
 * const agent = createReactAgent({ llm, tools: new GuardedToolNode(tools), stateSchema: GuardMessagesState });
 * ```
 */
export function createFileTools(options: FileToolsOptions): DynamicStructuredTool[] {
  const kit = createToolKit(options);
  const tools = [readFileTool(kit), listFilesTool(kit), writeToFileTool(kit), applyDiffTool(kit)];
  return kit.options.allowCommands ? [...tools, executeCommandTool(kit)] : tools;
}
