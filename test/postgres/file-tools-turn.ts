/**
 * Sessions of the cached file tools on one thread, in this Node process (test/postgres/persistence.int.test.ts): a
 * graph START → tools → END over `createFileTools` in a GuardedToolNode, stored in PostgreSQL (`postgres://…`) or in
 * a MemorySaver (`memory`: every session in this one process). Each session builds a fresh graph on the same
 * checkpointer and reads the thread's `fileCache` first (what a new process restores); each step is one AI message
 * with one tool call, or an edit of a file outside the tools. Prints JSON (`FileToolsTurnOutput`).
 *
 * Usage: node --import tsx test/postgres/file-tools-turn.ts <postgres-url | memory> <thread-id> <root> '<sessions as JSON>'
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { FileCacheState } from "../../src/fs/cache.js";
import { createFileTools } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { openPostgresSaver } from "../support/postgres.js";

/** A tool call (its id is given, the same in every process) or an edit made outside the tools. */
export type FileStep =
  | { id: string; name: string; args: Record<string, unknown> }
  | { edit: { path: string; content: string } };

export interface FileReply {
  id: string;
  text: string;
  status: string | undefined;
  cached: boolean | undefined;
  /** The call id of the earlier result a reference answer points to. */
  ref: string | undefined;
}

export interface FileToolsTurnOutput {
  sessions: {
    /** The cached paths of the thread's `fileCache` when the session began (read with getState). */
    restored: string[];
    replies: FileReply[];
  }[];
  /** The thread's `fileCache` after the last session, read back with getState. */
  fileCache: FileCacheState;
}

const [where, threadId, root, sessionsJson] = process.argv.slice(2);
if (!where || !threadId || !root || !sessionsJson)
  throw new Error("usage: file-tools-turn.ts <postgres-url | memory> <thread-id> <root> <sessions-json>");
const checkpointer: BaseCheckpointSaver = where === "memory" ? new MemorySaver() : await openPostgresSaver(where);
const config = { configurable: { thread_id: threadId } };

const sessions: FileToolsTurnOutput["sessions"] = [];
let fileCache: FileCacheState | undefined;
for (const steps of JSON.parse(sessionsJson) as FileStep[][]) {
  const graph = new StateGraph(GuardMessagesState)
    // The clock runs 5 s ahead, past the racy window: the project was made a while before the agent started (the
    // test sets its mtimes back, but no one can set the ctimes), so what is served from the cache does not depend on
    // how long a new process takes to start.
    .addNode(
      "tools",
      new GuardedToolNode(createFileTools({ root, allowCommands: true, clock: () => Date.now() + 5_000 })),
    )
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer });
  const before = (await graph.getState(config)).values as { fileCache?: FileCacheState };
  const replies: FileReply[] = [];
  for (const step of steps) {
    if ("edit" in step) {
      writeFileSync(join(root, step.edit.path), step.edit.content);
      continue;
    }
    const ai = new AIMessage({
      content: "",
      tool_calls: [{ id: step.id, name: step.name, args: step.args, type: "tool_call" }],
    });
    const out = await graph.invoke({ messages: [ai] }, config);
    const reply = (out.messages as BaseMessage[]).find(
      (m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === step.id,
    );
    if (!reply) throw new Error(`file-tools-turn.ts: no reply to ${step.id}`);
    const artifact = reply.artifact as { cached?: boolean; content_ref?: string } | undefined;
    replies.push({
      id: step.id,
      text: String(reply.content),
      status: reply.status,
      cached: artifact?.cached,
      ref: artifact?.content_ref,
    });
  }
  sessions.push({ restored: Object.keys(before.fileCache?.files ?? {}), replies });
  fileCache = ((await graph.getState(config)).values as { fileCache: FileCacheState }).fileCache;
}
if (fileCache === undefined) throw new Error("file-tools-turn.ts: no sessions to run");
process.stdout.write(`${JSON.stringify({ sessions, fileCache } satisfies FileToolsTurnOutput)}\n`);
if (checkpointer instanceof PostgresSaver) await checkpointer.end();
