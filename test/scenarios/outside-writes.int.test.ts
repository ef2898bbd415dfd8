/**
 * Issue 43, class 2 (shell agents watching a build or a training run: OpenHands' and Gemini CLI's `tail` of a log
 * that a background process writes, ml-intern's `cat logs/train.log` while training appends): re-reading a file that
 * something else writes was blocked as redundant, then the run was stopped at the 4th read. Only the package's own
 * file tools knew that a file changed; shell reads assumed that only the agent writes. Now a read-only shell command
 * whose files are known (resolved against `rules.root`, or absolute) has the freshness check the file tools have:
 * the adapter fingerprints the files when the read runs, keeps the fingerprint with the recorded result, and checks
 * it again before a block; a file that changed makes the read no repeat. Reads of files that did not change are
 * still blocked. Through createAgent, createReactAgent, and replay (the recorded answers stand for the check).
 */
import { execSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, type ToolGuardOptions } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { replayGuards, runFromMessages } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { outcomesOf } from "./support.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project whose build has written the first lines of `build.log` (and `logs/train.log`). */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), "outside-writes-"));
  roots.push(root);
  writeFileSync(join(root, "build.log"), "[1/9] configure\n[2/9] compile core\n[3/9] compile cli\n");
  mkdirSync(join(root, "logs"));
  writeFileSync(join(root, "logs", "train.log"), "epoch 1 loss 2.31\n");
  return root;
}

/** A real shell tool: runs the command with `bash` in the project folder. */
function bash(root: string) {
  return tool(
    async ({ command }) => {
      try {
        return execSync(command, { cwd: root, shell: "/bin/bash", encoding: "utf8", timeout: 10_000 });
      } catch (error) {
        throw new Error(String((error as { stderr?: unknown }).stderr ?? error));
      }
    },
    { name: "bash", description: "Runs a shell command in the project.", schema: z.object({ command: z.string() }) },
  );
}

/** What the build (or the training run) does between two reads: appends a line, or nothing. */
type Writer = ((root: string, n: number) => void) | undefined;
const build: Writer = (root, n) => appendFileSync(join(root, "build.log"), `[${n + 3}/9] compile module ${n}\n`);
const training: Writer = (root, n) =>
  appendFileSync(join(root, "logs", "train.log"), `epoch ${n + 1} loss ${(2.3 - n / 10).toFixed(2)}\n`);

const READS = 4;
/** The model reads `command` READS times; before each read after the first, `writer` writes (the outside process). */
function model(root: string, command: string, writer: Writer, reads = READS): ScriptedChatModel {
  const script: ScriptStep[] = Array.from({ length: reads }, (_, i) => () => {
    if (i > 0) writer?.(root, i);
    return { content: "Checking the build.", toolCalls: [{ name: "bash", args: { command } }] };
  });
  return new ScriptedChatModel([...script, "The build is done."]);
}

type Adapter = "createAgent" | "createReactAgent" | "replayGuards";
const ADAPTERS: readonly Adapter[] = ["createAgent", "createReactAgent", "replayGuards"];
const input = { messages: [{ role: "user", content: "Watch the build and tell me when it is done." }] };
const config = (thread: string) => ({ configurable: { thread_id: thread }, recursionLimit: 100 });

interface Run {
  outcomes: string[];
  answers: string[];
  strikes: number;
  /** The last message's text: the model's own answer when the run was not stopped. */
  last: string;
}

/** The script through one adapter (`options(root)`: the guard options; default `rules.root` is the project). */
async function run(
  adapter: Adapter,
  command: (root: string) => string,
  writer: Writer,
  options: (root: string) => ToolGuardOptions = (root) => ({ rules: { root } }),
  reads = READS,
): Promise<Run> {
  const root = project();
  const llm = model(root, command(root), writer, reads);
  const guard = options(root);
  let result: Record<string, unknown>;
  if (adapter === "createAgent") {
    const middleware = [guardMiddleware(guard)];
    const agent = createAgent({ model: llm, tools: [bash(root)], middleware, checkpointer: new MemorySaver() });
    result = (await agent.invoke(input, config("agent"))) as Record<string, unknown>;
  } else if (adapter === "createReactAgent") {
    const node = new GuardedToolNode([bash(root)], guard);
    const agent = createReactAgent({
      llm,
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(node),
      checkpointer: new MemorySaver(),
    });
    result = (await agent.invoke(input, config("react"))) as Record<string, unknown>;
  } else {
    return replayed(root, llm, guard);
  }
  const messages = result.messages as BaseMessage[];
  const strikes = (result.toolGuard as { escalation: { strikes: number } }).escalation.strikes;
  return { ...outcomesOf(messages), strikes, last: String(messages.at(-1)?.content) };
}

/** The script run without guards (the shell as it is, the build writing), then replayed through the guards. */
async function replayed(root: string, llm: ScriptedChatModel, guard: ToolGuardOptions): Promise<Run> {
  const agent = createReactAgent({ llm, tools: new ToolNode([bash(root)]), checkpointer: new MemorySaver() });
  const result = await agent.invoke(input, config("recorded"));
  const { decisions, totals } = replayGuards(runFromMessages(result.messages, "recorded"), guard);
  return {
    outcomes: decisions.map((d) => (d.action === "allow" ? "ran" : d.action === "block" ? `${d.rule}@…` : "stop")),
    answers: decisions.map((d) => d.content),
    strikes: totals.runsStopped > 0 ? 4 : 0,
    last: totals.runsStopped > 0 ? "stopped" : "The build is done.",
  };
}

const TAIL = () => "tail -n 3 build.log";
const ranAll = Array.from({ length: READS }, () => "ran");

describe.each(ADAPTERS)("issue 43, class 2: re-reads of files that something else writes, through %s", (adapter) => {
  it("`tail -n 3 build.log` four times while the build appends: every read runs, the run is not stopped", async () => {
    const r = await run(adapter, TAIL, build);
    expect(r.outcomes).toEqual(ranAll);
    expect(r.answers[3]).toContain("compile module 3");
    expect(r.strikes).toBe(0);
    expect(r.last).toBe("The build is done.");
  });

  it("`cat logs/train.log` while training appends: every read runs", async () => {
    const r = await run(adapter, () => "cat logs/train.log", training);
    expect(r.outcomes).toEqual(ranAll);
    expect(r.answers[3]).toContain("epoch 4 loss");
    expect(r.last).toBe("The build is done.");
  });

  it("an absolute path, without `rules.root`: every read runs", async () => {
    const r = await run(
      adapter,
      (root) => `tail -n 3 ${join(root, "build.log")}`,
      build,
      () => ({}),
    );
    expect(r.outcomes).toEqual(ranAll);
    expect(r.last).toBe("The build is done.");
  });

  it("the same four reads with nothing appended: the repeats are blocked as before", async () => {
    const r = await run(adapter, TAIL, undefined);
    expect(r.outcomes[0]).toBe("ran");
    expect(r.outcomes.slice(1).filter((o) => o === "ran")).toEqual([]);
    expect(r.outcomes.length).toBeGreaterThan(1);
  });

  // Issue 63, "Why 5": without a root the guards cannot prove the file unchanged, so they must not assume it.
  it("`tail -n 3 build.log` 10 times without `rules.root` while the build appends: every read runs", async () => {
    const r = await run(adapter, TAIL, build, () => ({}), 10);
    expect(r.outcomes).toEqual(Array.from({ length: 10 }, () => "ran"));
    expect(r.answers[9]).toContain("compile module 9");
    expect(r.last).toBe("The build is done.");
  });

  it("the same reads without `rules.root` and nothing appended: 2 run, the 3rd is blocked after two equal answers", async () => {
    const r = await run(adapter, TAIL, undefined, () => ({}), 10);
    expect(r.outcomes.slice(0, 3)).toEqual([
      "ran",
      "ran",
      adapter === "replayGuards" ? "consecutive@…" : "consecutive@1",
    ]);
  });
});

describe("issue 43, class 2: the fingerprint persists with the checkpointer", () => {
  /** Two graphs on one checkpointer: the first reads the log; the second, later, reads it again in the same run. */
  async function readAgain(writer: Writer): Promise<string[]> {
    const root = project();
    const checkpointer = new MemorySaver();
    const read = { name: "bash", args: { command: "tail -n 3 build.log" } };
    const graph = (script: ScriptStep[]) => {
      // One run across the person's messages: the second graph's read repeats the first's in the same run.
      const node = new GuardedToolNode([bash(root)], { rules: { root }, memory: { runBoundary: "none" } });
      const llm = new ScriptedChatModel(script);
      return createReactAgent({ llm, tools: node, stateSchema: GuardMessagesState, checkpointer });
    };
    const thread = config("persisted");
    await graph([{ toolCalls: [read] }, "Still building."]).invoke(input, thread);
    writer?.(root, 1);
    // A new graph on the same thread: only the checkpoint knows the fingerprint of the first read.
    const again = { messages: [{ role: "user", content: "And now?" }] };
    const result = await graph([{ toolCalls: [read] }, "The build is done."]).invoke(again, thread);
    return outcomesOf(result.messages as BaseMessage[]).outcomes;
  }

  it("the build appended between two graphs: the second read runs", async () => {
    expect(await readAgain(build)).toEqual(["ran", "ran"]);
  });

  it("nothing appended: the second read is blocked", async () => {
    const outcomes = await readAgain(undefined);
    expect(outcomes).toHaveLength(2);
    expect(outcomes[0]).toBe("ran");
    expect(outcomes[1]).not.toBe("ran");
  });
});
