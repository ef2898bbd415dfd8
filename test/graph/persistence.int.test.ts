import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import {
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
  type ToolGuardState,
} from "../../src/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";
import { call, fatesOf, runTurns } from "../support/helpers.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs scripted turns on a thread of a SQLite file in a new Node process (test/fixtures/sqlite-turn.ts). */
async function turnProcess(db: string, thread: string, turns: ScriptedToolCall[][], guard?: GuardedToolNodeOptions) {
  const { stdout } = await run(
    process.execPath,
    [
      "--import",
      "tsx",
      "test/fixtures/sqlite-turn.ts",
      db,
      thread,
      JSON.stringify(turns),
      ...(guard ? [JSON.stringify(guard)] : []),
    ],
    { cwd: join(import.meta.dirname, "..", ".."), timeout: 60_000 },
  );
  return stdout;
}

const firstSession: ScriptedToolCall[][] = [[call("read_file", { path: "config.py" })], [call("list_files", {})]];
const secondSession: ScriptedToolCall[][] = [
  [call("read_file", { path: "config.py" })],
  [call("read_file", { path: "app.py" })],
  [call("read_file", { path: "app.py" })],
];

/** The whole thread is one run: the guards' memory of the first session blocks in the second. */
const ONE_RUN: GuardedToolNodeOptions = { memory: { runBoundary: "none" } };

/** The ids of the person's messages of a thread, in order. */
const personIds = (messages: BaseMessage[]) => messages.filter((m) => m.getType() === "human").map((m) => m.id);

describe("persistence", () => {
  it("MemorySaver keeps guard state across invocations of a thread", async () => {
    const checkpointer = new MemorySaver();
    const first = await runTurns(firstSession, { checkpointer, threadId: "t", guard: ONE_RUN });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);
    const second = await runTurns(secondSession, { checkpointer, threadId: "t", guard: ONE_RUN });
    const fresh = second.fates.slice(first.fates.length);
    expect(fresh.map((f) => f.fate)).toEqual(["redundant", "ran", "consecutive"]);
  });

  it("MemorySaver keeps the thread's counters and the run marker when a new message starts a new run", async () => {
    const checkpointer = new MemorySaver();
    const first = await runTurns(firstSession, { checkpointer, threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);
    expect(first.result.toolGuard.run).toBe(personIds(first.result.messages)[0]);
    const second = await runTurns(secondSession, { checkpointer, threadId: "t" });
    // The new run reads config.py afresh; the repeat within the run is blocked.
    expect(second.fates.slice(first.fates.length).map((f) => f.fate)).toEqual(["ran", "ran", "consecutive"]);
    const guard = second.result.toolGuard;
    const persons = personIds(second.result.messages);
    expect(persons).toHaveLength(2);
    expect(guard.run).toBe(persons[1]);
    expect(guard.run).not.toBe(first.result.toolGuard.run);
    // The counters go on from the first invocation's; the window holds the second run's calls only.
    expect(guard.stats.allowed).toBe(4);
    expect(guard.stats.blocked).toMatchObject({ consecutive: 1, redundant: 0 });
    const firstSeq = first.result.toolGuard.repetition.nextSeq;
    expect(guard.repetition.window.map((r) => [r.tool, r.seq >= firstSeq])).toEqual([
      ["read_file", true],
      ["read_file", true],
    ]);
    expect((await second.agent.getState({ configurable: { thread_id: "t" } })).values.toolGuard).toEqual(guard);
  });

  it("two threads on one compiled graph never see each other's guard state", async () => {
    // One graph, one model: the model reads the file the user names, then answers.
    const graphWith = (guard: GuardedToolNodeOptions) => {
      const llm = new ScriptedChatModel((messages) => {
        const last = messages[messages.length - 1];
        if (last?.getType() !== "human") return "Done.";
        return { toolCalls: [{ name: "read_file", args: { path: String(last.content).replace("read ", "") } }] };
      });
      const graph = createReactAgent({
        llm,
        tools: new GuardedToolNode(createWorkspaceTools(sampleProject()), guard),
        stateSchema: GuardMessagesState,
        checkpointer: new MemorySaver(),
      });
      return async (thread: string, content: string) => {
        const out = await graph.invoke(
          { messages: [{ role: "user", content }] },
          { configurable: { thread_id: thread } },
        );
        return {
          fate: fatesOf(out.messages).at(-1)?.fate,
          guard: out.toolGuard,
          person: personIds(out.messages).at(-1),
        };
      };
    };

    // One run per thread: a repeat in a later message is blocked, in its own thread only.
    const ask = graphWith(ONE_RUN);
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

    // The defaults (a run per message): each thread keeps its own counters and its own run.
    const askRuns = graphWith({});
    await askRuns("a", "read config.py");
    await askRuns("b", "read config.py");
    const a2 = await askRuns("a", "read config.py");
    expect(a2.fate).toBe("ran"); // a new message: a new run of thread a
    const b2 = await askRuns("b", "read app.py");
    expect(a2.guard.stats.allowed).toBe(2);
    expect(b2.guard.stats.allowed).toBe(2);
    expect(a2.guard.run).toBe(a2.person);
    expect(b2.guard.run).toBe(b2.person);
    expect(b2.guard.run).not.toBe(a2.guard.run);
    expect(b2.guard.repetition.window.map((r) => r.tool)).toEqual(["read_file"]); // thread b's second run only
  });

  it("with SqliteSaver on a file, a new Node process blocks what the first process would have blocked (one run)", async () => {
    const db = join(dir, "checkpoints.sqlite");
    const first = await runTurns(firstSession, {
      checkpointer: SqliteSaver.fromConnString(db),
      threadId: "t",
      guard: ONE_RUN,
    });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

    // What an uninterrupted process does with the same two sessions.
    const memory = new MemorySaver();
    await runTurns(firstSession, { checkpointer: memory, threadId: "t", guard: ONE_RUN });
    const uninterrupted = (await runTurns(secondSession, { checkpointer: memory, threadId: "t", guard: ONE_RUN })).fates
      .slice(2)
      .map((f) => f.fate);
    expect(uninterrupted).toEqual(["redundant", "ran", "consecutive"]);

    const stdout = await turnProcess(db, "t", secondSession, ONE_RUN);
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

  it("with SqliteSaver on a file, a new Node process starts the new message's run from the stored state", async () => {
    const db = join(dir, "runs.sqlite");
    const first = await runTurns(firstSession, { checkpointer: SqliteSaver.fromConnString(db), threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

    // What an uninterrupted process does with the same two sessions.
    const memory = new MemorySaver();
    await runTurns(firstSession, { checkpointer: memory, threadId: "t" });
    const one = await runTurns(secondSession, { checkpointer: memory, threadId: "t" });
    const uninterrupted = one.fates.slice(2).map((f) => f.fate);
    expect(uninterrupted).toEqual(["ran", "ran", "consecutive"]);

    const stdout = await turnProcess(db, "t", secondSession);
    expect(JSON.parse(stdout.trim())).toEqual(uninterrupted);

    // Read back in a third connection: the counters of both processes, and the second message's run.
    const saved = await SqliteSaver.fromConnString(db).getTuple({ configurable: { thread_id: "t" } });
    const toolGuard = saved?.checkpoint.channel_values.toolGuard as ToolGuardState;
    const messages = saved?.checkpoint.channel_values.messages as BaseMessage[];
    const persons = personIds(messages);
    expect(persons).toHaveLength(2);
    expect(toolGuard.run).toBe(persons[1]);
    expect(toolGuard.run).not.toBe(first.result.toolGuard.run);
    expect(toolGuard.stats).toEqual(one.result.toolGuard.stats);
    expect(toolGuard.stats.allowed).toBe(4);
    expect(toolGuard.stats.blocked).toMatchObject({ consecutive: 1, redundant: 0 });
  });
});
