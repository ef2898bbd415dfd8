/**
 * Issue 21 migration: a thread written by versions whose `fileCache` was a `DeltaChannel` holding the files'
 * contents (its writes `put` whole contents; with a snapshot, its value holds them) reads back under the ordinary
 * channel: LangGraph replays the old writes through the new reducer, which drops the contents; the cache then works
 * as before (a repeat read of an unchanged file is answered with a reference to the old thread's result).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  DeltaChannel,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { digest } from "../../src/common/identity/signature.js";
import {
  type CachedFile,
  emptyFileCache,
  type FileCacheState,
  type FileCacheWrite,
  reduceFileCache,
} from "../../src/fs/cache.js";
import { resolveFileToolsOptions } from "../../src/fs/options.js";
import { viewLines } from "../../src/fs/read.js";
import { createFileTools } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState, GuardState } from "../../src/index.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-migrate-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, "proj");
mkdirSync(root);
const content = Array.from({ length: 60 }, (_, i) => `export const value${i} = ${i * 7}; // line ${i + 1}\n`).join("");
writeFileSync(join(root, "a.ts"), content);
const path = join(root, "a.ts");

/** The channel as declared before issue 21 (src/channels/index.ts), with its snapshot frequency. */
function oldState(snapshotFrequency?: number) {
  return Annotation.Root({
    ...MessagesAnnotation.spec,
    ...GuardState.spec,
    fileCache: new DeltaChannel<FileCacheState, FileCacheWrite | FileCacheWrite[]>(reduceFileCache, {
      initialValueFactory: emptyFileCache,
      ...(snapshotFrequency === undefined ? {} : { snapshotFrequency }),
    }),
  });
}

/** What read_file wrote before issue 21 for a miss answered whole: the entry with its content, and the reference. */
function oldReadWrites(toolCallId: string): { message: ToolMessage; writes: FileCacheWrite[] } {
  const view = viewLines(content, {}, resolveFileToolsOptions({ root }).limits);
  const s = statSync(path);
  const file = {
    content,
    hash: digest(content),
    mtimeMs: s.mtimeMs,
    ctimeMs: s.ctimeMs,
    size: s.size,
    ino: s.ino,
    cachedAt: Date.now(),
  };
  return {
    message: new ToolMessage({ content: view.text, tool_call_id: toolCallId, name: "read_file" }),
    writes: [
      { op: "put", path, file: file as unknown as CachedFile, budget: 50_000_000 },
      { op: "count", misses: 1 },
      { op: "touch", path, ref: toolCallId, refDigest: digest(view.text) },
    ],
  };
}

async function writeOldThread(saver: BaseCheckpointSaver, snapshotFrequency?: number) {
  const graph = new StateGraph(oldState(snapshotFrequency))
    .addNode("tools", () => {
      const { message, writes } = oldReadWrites("r1");
      return { messages: [message], fileCache: writes };
    })
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
  const ai = new AIMessage({
    content: "",
    tool_calls: [{ name: "read_file", args: { path: "a.ts" }, id: "r1", type: "tool_call" }],
  });
  await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
  // A second step (the node writes again: a second miss), so that the channel's writes span two checkpoints.
  await graph.invoke({ messages: [new AIMessage("read it")] }, { configurable: { thread_id: "t" } });
}

async function reopen(saver: BaseCheckpointSaver) {
  const graph = new StateGraph(GuardMessagesState)
    .addNode("tools", new GuardedToolNode(createFileTools({ root })))
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" } };
  const before = (await graph.getState(config)).values.fileCache as FileCacheState;
  expect(Object.keys(before.files)).toEqual([path]);
  expect(before.bytes).toBe(content.length);
  const ai = new AIMessage({
    content: "",
    tool_calls: [{ name: "read_file", args: { path: "a.ts" }, id: "r2", type: "tool_call" }],
  });
  await graph.invoke({ messages: [ai] }, config);
  const after = (await graph.getState(config)).values;
  const answer = after.messages.at(-1) as ToolMessage;
  expect(answer.tool_call_id).toBe("r2");
  expect(String(answer.content)).toContain("result of tool call r1");
  const cache = after.fileCache as FileCacheState;
  expect(cache.stats).toMatchObject({ hits: 1, misses: 2, staleRefreshes: 0 });
  expect(cache.files[path]).toMatchObject({ hash: digest(content), chars: content.length, ref: "r1" });
  expect(JSON.stringify(cache)).not.toContain("export const value");
  expect(cache.bytes).toBe(content.length);
}

describe("a thread written with the DeltaChannel cache reads back under the ordinary channel", () => {
  it("MemorySaver: old writes replayed, contents dropped, a repeat read answered by reference", async () => {
    const saver = new MemorySaver();
    await writeOldThread(saver);
    await reopen(saver);
  });

  it("SqliteSaver, with a snapshot holding contents in the old value", async () => {
    const file = join(base, "old.sqlite");
    await writeOldThread(SqliteSaver.fromConnString(file), 1);
    await reopen(SqliteSaver.fromConnString(file));
  });

  it("SqliteSaver, writes only", async () => {
    const file = join(base, "old-writes.sqlite");
    await writeOldThread(SqliteSaver.fromConnString(file));
    await reopen(SqliteSaver.fromConnString(file));
  });
});
