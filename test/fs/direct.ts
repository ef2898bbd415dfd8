/**
 * The file tools driven directly, without a graph: a fake tool runtime carries the cache state (the Command's
 * `fileCache` writes applied with `reduceFileCache`, as the channel would) and the messages (for reference answers).
 */
import type { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { emptyFileCache, type FileCacheState, type FileCacheWrite, reduceFileCache } from "../../src/fs/cache.js";
import { createFileTools, type FileToolsOptions } from "../../src/fs/tools.js";
import { describeReply } from "../support/file-tools.js";

/** One answer of a tool called directly. */
export type DirectAnswer = ReturnType<typeof describeReply>;

/** The file tools over `root`, called one at a time on one simulated thread. */
export function directTools(root: string, options: Partial<FileToolsOptions> = {}) {
  const tools = createFileTools({ root, allowCommands: true, ...options });
  type Invocable = { name: string; invoke(input: unknown, config?: unknown): Promise<unknown> };
  const byName = new Map<string, Invocable>((tools as unknown as Invocable[]).map((t) => [t.name, t]));
  let cache: FileCacheState = emptyFileCache();
  const messages: ToolMessage[] = [];
  let n = 0;
  const call = async (name: string, args: Record<string, unknown>): Promise<DirectAnswer> => {
    const tool = byName.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    n += 1;
    const id = `c${n}`;
    const runtime = { state: { messages: [...messages], fileCache: cache } };
    const out = (await tool.invoke({ id, name, args, type: "tool_call" }, runtime)) as ToolMessage | Command;
    let reply: ToolMessage;
    if (out instanceof Command) {
      const update = out.update as { messages: ToolMessage[]; fileCache?: FileCacheWrite[] };
      reply = update.messages[0] as ToolMessage;
      if (update.fileCache) cache = reduceFileCache(cache, [update.fileCache]);
    } else reply = out;
    messages.push(reply);
    return describeReply(reply);
  };
  return {
    call,
    /** The cache state as the channel would hold it now. */
    cache: () => cache,
    /** Replaces the cache state (e.g. with one an older version stored). */
    setCache: (next: FileCacheState) => {
      cache = next;
    },
    /** The result of an earlier call, by id (for reference answers). */
    message: (id: string) => messages.find((m) => m.tool_call_id === id),
  };
}
