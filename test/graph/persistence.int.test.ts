import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";
import { call, fatesOf, runTurns } from "../support/helpers.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const firstSession: ScriptedToolCall[][] = [[call("read_file", { path: "config.py" })], [call("list_files", {})]];
const secondSession: ScriptedToolCall[][] = [
  [call("read_file", { path: "config.py" })],
  [call("read_file", { path: "app.py" })],
  [call("read_file", { path: "app.py" })],
];

describe("persistence", () => {
  it("MemorySaver keeps guard state across invocations of a thread", async () => {
    const checkpointer = new MemorySaver();
    const first = await runTurns(firstSession, { checkpointer, threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);
    const second = await runTurns(secondSession, { checkpointer, threadId: "t" });
    const fresh = second.fates.slice(first.fates.length);
    expect(fresh.map((f) => f.fate)).toEqual(["redundant", "ran", "consecutive"]);
  });

  it("two threads on one compiled graph never see each other's guard state", async () => {
    // One graph, one model: the model reads the file the user names, then answers.
    const llm = new ScriptedChatModel((messages) => {
      const last = messages[messages.length - 1];
      if (last?.getType() !== "human") return "Done.";
      return { toolCalls: [{ name: "read_file", args: { path: String(last.content).replace("read ", "") } }] };
    });
    const graph = createReactAgent({
      llm,
      tools: new GuardedToolNode(createWorkspaceTools(sampleProject())),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const ask = async (thread: string, content: string) => {
      const out = await graph.invoke(
        { messages: [{ role: "user", content }] },
        { configurable: { thread_id: thread } },
      );
      return { fate: fatesOf(out.messages).at(-1)?.fate, guard: out.toolGuard };
    };
    expect((await ask("a", "read config.py")).fate).toBe("ran");
    expect((await ask("b", "read config.py")).fate).toBe("ran"); // thread a's read is not b's
    expect((await ask("a", "read config.py")).fate).toBe("consecutive");
    const b = await ask("b", "read app.py");
    expect(b.fate).toBe("ran");
    expect(b.guard.repetition.window.map((r) => r.tool)).toEqual(["read_file", "read_file"]);
    expect(b.guard.stats.blocked).toMatchObject({
      consecutive: 0,
      threshold: 0,
      redundant: 0,
      near_duplicate: 0,
      repeat_failure: 0,
    });
  });

  it("with SqliteSaver on a file, a new Node process blocks what the first process would have blocked", async () => {
    const db = join(dir, "checkpoints.sqlite");
    const first = await runTurns(firstSession, { checkpointer: SqliteSaver.fromConnString(db), threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

    // What an uninterrupted process does with the same two sessions.
    const memory = new MemorySaver();
    await runTurns(firstSession, { checkpointer: memory, threadId: "t" });
    const uninterrupted = (await runTurns(secondSession, { checkpointer: memory, threadId: "t" })).fates
      .slice(2)
      .map((f) => f.fate);
    expect(uninterrupted).toEqual(["redundant", "ran", "consecutive"]);

    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "test/fixtures/sqlite-turn.ts", db, "t", JSON.stringify(secondSession)],
      { cwd: join(import.meta.dirname, "..", ".."), timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim())).toEqual(uninterrupted);

    // And the state is really in the file: read it back here, in a third connection.
    const saved = await SqliteSaver.fromConnString(db).getTuple({ configurable: { thread_id: "t" } });
    const toolGuard = saved?.checkpoint.channel_values.toolGuard as { stats: { blocked: Record<string, number> } };
    expect(toolGuard.stats.blocked).toMatchObject({
      consecutive: 1,
      threshold: 0,
      redundant: 1,
      near_duplicate: 0,
      repeat_failure: 0,
    });
  });
});
