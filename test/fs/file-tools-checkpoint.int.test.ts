/**
 * Checkpoint size with the file cache: with 5 MB of files read, every new checkpoint stays within 1.2x of the
 * same run with caching off. The cache holds digests and stats, not contents (issue 21), so what each checkpoint
 * copies of it is small.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createFileTools } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-ckpt-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, "proj");
mkdirSync(root);
for (let i = 0; i < 10; i += 1) {
  const line = `${String(i).repeat(40)} some source text of file ${i}\n`;
  writeFileSync(join(root, `big${i}.txt`), line.repeat(Math.ceil(500_000 / line.length)));
}

/** Reads the ten files (5 MB), then lists the root three times; returns the thread's final state. */
async function run(saver: BaseCheckpointSaver, cache: boolean) {
  const graph = new StateGraph(GuardMessagesState)
    .addNode(
      "tools",
      new GuardedToolNode(
        createFileTools({
          root,
          cache,
          limits: { defaultLineLimit: 100_000, maxLineChars: 100_000, maxReadChars: 1_000_000 }, // whole files
        }),
      ),
    )
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
  const calls = [
    ...Array.from({ length: 10 }, (_, i) => ({ name: "read_file", args: { path: `big${i}.txt` } })),
    ...Array.from({ length: 3 }, () => ({ name: "list_files", args: {} })),
  ];
  for (const [i, c] of calls.entries()) {
    const ai = new AIMessage({ content: "", tool_calls: [{ ...c, id: `c${i}`, type: "tool_call" }] });
    await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
  }
  return (await graph.getState({ configurable: { thread_id: "t" } })).values;
}

/** Bytes of each checkpoint blob MemorySaver stored, oldest first. */
function memoryCheckpointBytes(saver: MemorySaver): number[] {
  const byId = saver.storage.t?.[""] ?? {};
  return Object.keys(byId)
    .sort()
    .map((id) => {
      const [checkpoint, metadata] = byId[id] as [Uint8Array, Uint8Array, string | undefined];
      return checkpoint.length + metadata.length;
    });
}

function expectWithin(withCache: number[], without: number[]) {
  expect(withCache.length).toBe(without.length);
  for (const [i, bytes] of withCache.entries()) expect(bytes).toBeLessThanOrEqual(1.2 * (without[i] as number));
}

describe("checkpoint bytes with 5 MB read", () => {
  it("MemorySaver: each new checkpoint within 1.2x of caching off", async () => {
    const on = new MemorySaver();
    const off = new MemorySaver();
    const state = await run(on, true);
    await run(off, false);
    expect(Object.keys(state.fileCache.files)).toHaveLength(10); // the cache is really there
    expect(state.fileCache.bytes).toBeGreaterThan(4_900_000);
    expectWithin(memoryCheckpointBytes(on), memoryCheckpointBytes(off));
  }, 120_000);

  it("SqliteSaver: each new checkpoint within 1.2x of caching off, and the cache is restored", async () => {
    const onFile = join(base, "on.sqlite");
    const offFile = join(base, "off.sqlite");
    const state = await run(SqliteSaver.fromConnString(onFile), true);
    await run(SqliteSaver.fromConnString(offFile), false);
    expect(Object.keys(state.fileCache.files)).toHaveLength(10);
    const sizes = (file: string) =>
      (
        new Database(file, { readonly: true })
          .prepare(
            "SELECT length(checkpoint) + length(metadata) AS n FROM checkpoints WHERE thread_id = 't' ORDER BY checkpoint_id",
          )
          .all() as { n: number }[]
      ).map((r) => r.n);
    expectWithin(sizes(onFile), sizes(offFile));
  }, 120_000);
});
