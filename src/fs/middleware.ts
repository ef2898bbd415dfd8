/** The file tools as createAgent tools, their caches in the middleware's state. */
import { StateSchema } from "@langchain/langgraph";
import { defineMiddleware } from "../common/agent/define.js";
import { agentFieldOf } from "../common/channel.js";
import { guardLogChannel } from "../common/events/stream-events.js";
import { fileCacheChannel } from "./cache.js";
import type { FileToolsOptions } from "./options.js";
import { createFileTools } from "./tools.js";

/**
 * The file tools (`read_file`, `list_files`, `write_to_file`, `apply_source_code_diff`, and `execute_command` with
 * `allowCommands: true`) for langchain `createAgent`: the middleware registers the tools with the agent (do not pass
 * them in `tools` as well) and keeps their cache (digests and stats, no contents: about 200 bytes a file) and
 * directory tree in its `fileCache` channel, per thread, as `GuardState` does in a graph. With {@link guardMiddleware}
 * in the same agent, a repeat read is answered from the cache (with a reference to the earlier result while it is
 * still in `messages`) rather than blocked. Options are `createFileTools`'s, validated here.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { MemorySaver } from "@langchain/langgraph";
 * import { fileToolsMiddleware, guardMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({
 *   model,
 *   tools: [],
 *   middleware: [guardMiddleware(), fileToolsMiddleware({ root: "/repo" })],
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export function fileToolsMiddleware(options: FileToolsOptions) {
  return defineMiddleware({
    name: "FileToolsMiddleware",
    stateSchema: new StateSchema({
      /** The file tools' cache (digests and stats, no contents) and directory tree, per thread. */
      fileCache: agentFieldOf(fileCacheChannel),
      /** Guard events, counted and the most recent kept (shared with the other middleware). */
      guardLog: agentFieldOf(guardLogChannel),
    }),
    tools: createFileTools(options),
  });
}
