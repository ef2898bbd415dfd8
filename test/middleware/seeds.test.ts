/**
 * The seed scenarios through langchain's `createAgent` with the middleware and a scripted model: seed 000
 * (redundancy protection), seed 003 (feedback, acknowledgment, escalation), seed 004 (loop detection and safety
 * limits) and seed 001 (file tools that serve repeats from a cache). Each asserts what the graph tests
 * (test/graph/*, test/fs/*) assert for the node version, and that every tool call is answered exactly once.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createWorkspaceTools, type Files, sampleProject } from "../../examples/workspace.js";
import { similarityRatio } from "../../src/core/index.js";
import type { FileCacheState } from "../../src/fs/cache.js";
import {
  type EscalationInterrupt,
  type GuardArtifact,
  isEscalationInterrupt,
  type LoopState,
  type ToolGuardState,
} from "../../src/index.js";
import {
  fileToolsMiddleware,
  type GuardMiddlewareOptions,
  guardMiddleware,
  loopDetectMiddleware,
  safetyLimitsMiddleware,
} from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../../src/testing/index.js";
import { escalationTools, seedPace, validHistory } from "../support/escalation.js";
import { call, fatesOf } from "../support/helpers.js";
import { tempProjects } from "../support/projects.js";

// ---------------------------------------------------------------------------------------------------------------
// Shared

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const toolReplies = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
const guardOf = (m: BaseMessage | undefined): GuardArtifact | undefined =>
  m !== undefined && ToolMessage.isInstance(m)
    ? (m.artifact as { guard?: GuardArtifact } | undefined)?.guard
    : undefined;
const repliesTo = (messages: BaseMessage[], id: string) => toolReplies(messages).filter((m) => m.tool_call_id === id);
const aiMessages = (messages: BaseMessage[]) => messages.filter((m): m is AIMessage => AIMessage.isInstance(m));

// ---------------------------------------------------------------------------------------------------------------
// Seed 000: redundancy protection

const CONSECUTIVE =
  "⚠️ CRITICAL: Tool 'read_file' called with IDENTICAL inputs back-to-back! This is wasteful and indicates you're stuck. The operation context shows you ALREADY have this information. STOP and use a DIFFERENT approach.";
const THRESHOLD =
  "Tool 'read_file' has been called 4 times with identical inputs. Please try a different approach or tool to avoid getting stuck in a loop.";
const REDUNDANT =
  "⚠️ REDUNDANT OPERATION BLOCKED: Tool 'read_file' was already successfully executed with these inputs. The information you need is in your scratchpad from the previous successful call. Check your Recent Tool Operations and use the existing information.";

interface TurnsOptions {
  guard?: GuardMiddlewareOptions;
  files?: Files;
}

/** A createAgent with the seed's workspace tools and guardMiddleware: each element of `turns` is one AI message. */
async function runTurns(turns: ScriptedToolCall[][], opts: TurnsOptions = {}) {
  const files = opts.files ?? sampleProject();
  const llm = new ScriptedChatModel([...turns.map((toolCalls) => ({ toolCalls })), "Finished."]);
  const agent = createAgent({
    model: llm,
    tools: createWorkspaceTools(files),
    middleware: [guardMiddleware(opts.guard)],
    checkpointer: new MemorySaver(),
  });
  const result = await agent.invoke(
    { messages: [{ role: "user", content: "Work on the project." }] },
    { configurable: { thread_id: randomUUID() }, recursionLimit: 500 },
  );
  const messages = result.messages as BaseMessage[];
  return { messages, fates: fatesOf(messages), toolGuard: result.toolGuard as ToolGuardState, llm, files };
}

describe("seed 000 (redundancy protection) through createAgent", () => {
  it("scenario 1: a consecutive identical read is blocked with feedback, a re-read after a listing is redundant", async () => {
    const { messages, fates } = await runTurns([
      [call("read_file", { path: "config.py" })],
      [call("read_file", { path: "config.py" })],
      [call("list_files", { path: "./" })],
      [call("read_file", { path: "config.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", "redundant"]);
    expect(fates[1]?.content.startsWith(CONSECUTIVE)).toBe(true);
    expect(fates[3]?.content.startsWith(REDUNDANT)).toBe(true);
    const [, consecutive, , redundant] = toolReplies(messages);
    for (const blocked of [consecutive, redundant]) {
      expect(blocked?.status).toBe("error");
      expect(guardOf(blocked)?.blocked).toBe(true);
    }
    expect(guardOf(consecutive)).toMatchObject({ rule: "consecutive", escalation: 1 });
    // The feedback names the call and gives the previous result.
    const content = String(consecutive?.content);
    expect(content).toContain("Tool: read_file");
    expect(content).toContain('"path": "config.py"');
    expect(content).toContain("Previous result for this exact call:\nDEBUG = True");
    expect(content.endsWith("What will you do differently?")).toBe(true);
    expect(String(messages.at(-1)?.content)).toBe("Finished.");
    expect(validHistory(messages)).toEqual([]);
  });

  it("scenario 2: a failed read retried back-to-back is blocked; after a write it runs (and fails) again", async () => {
    const { messages, fates } = await runTurns([
      [call("read_file", { path: "missing.py" })],
      [call("read_file", { path: "missing.py" })],
      [call("write_to_file", { path: "other.py", content: "x = 1\n" })],
      [call("read_file", { path: "missing.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["failed", "consecutive", "ran", "failed"]);
    expect(validHistory(messages)).toEqual([]);
  });

  it("threshold rule: the 4th identical call within the window is blocked with the seed's message", async () => {
    const app = { path: "app.py" };
    const { messages, fates } = await runTurns(
      [
        [call("read_file", app)],
        [call("list_files", { path: "./" })],
        [call("read_file", app)],
        [call("write_to_file", { path: "other.py", content: "" })],
        [call("read_file", app)],
        [call("search_in_file", { pattern: "b", path: "b.py" })],
        [call("read_file", app)],
      ],
      { files: new Map([["b.py", "b\n"]]) },
    );
    expect(fates.map((f) => f.fate)).toEqual(["failed", "ran", "failed", "ran", "failed", "ran", "threshold"]);
    expect(fates[6]?.content.startsWith(THRESHOLD)).toBe(true);
    expect(guardOf(toolReplies(messages)[6])).toMatchObject({ blocked: true, rule: "threshold", count: 4 });
    expect(validHistory(messages)).toEqual([]);
  });

  it("threshold rule for a write: the same write a 4th time within the window is blocked", async () => {
    const c1 = { path: "app.py", content: "content1" };
    const { messages, fates } = await runTurns([
      [call("write_to_file", c1)],
      [call("list_files", { path: "a" })],
      [call("write_to_file", c1)],
      [call("list_files", { path: "b" })],
      [call("write_to_file", c1)],
      [call("list_files", { path: "c" })],
      [call("write_to_file", c1)],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "ran", "ran", "threshold"]);
    expect(validHistory(messages)).toEqual([]);
  });

  it("redundant read after a success is blocked; a write to the file in between allows the re-read", async () => {
    const stale = await runTurns([
      [call("read_file", { path: "app.py" })],
      [call("list_files", { path: "." })],
      [call("write_to_file", { path: "app.py", content: "print(2)\n" })],
      [call("read_file", { path: "app.py" })],
      [call("list_files", { path: "." })],
    ]);
    expect(stale.fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "ran"]);
    expect(stale.fates[3]?.content).toBe("print(2)\n");
    expect(validHistory(stale.messages)).toEqual([]);

    const valid = await runTurns([
      [call("read_file", { path: "app.py" })],
      [call("write_to_file", { path: "main.py", content: "" })],
      [call("read_file", { path: "app.py" })],
    ]);
    expect(valid.fates.map((f) => f.fate)).toEqual(["ran", "ran", "redundant"]);
    expect(guardOf(toolReplies(valid.messages)[2])?.blocked).toBe(true);
    expect(validHistory(valid.messages)).toEqual([]);
  });

  it('mode: "observe" blocks nothing and records what it would have blocked', async () => {
    const { messages, fates, toolGuard } = await runTurns(
      [
        [call("read_file", { path: "config.py" })],
        [call("read_file", { path: "config.py" })],
        [call("list_files", {})],
        [call("read_file", { path: "config.py" })],
      ],
      { guard: { mode: "observe" } },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran"]);
    expect(toolReplies(messages).filter((m) => guardOf(m) !== undefined)).toEqual([]);
    expect(toolGuard.observed.map((o) => [o.rule, o.enforced])).toEqual([
      ["consecutive", false],
      ["redundant", false],
    ]);
    expect(toolGuard.stats.observed).toMatchObject({ consecutive: 1, threshold: 0, redundant: 1 });
    expect(toolGuard.stats.blocked).toMatchObject({ consecutive: 0, threshold: 0, redundant: 0 });
    expect(validHistory(messages)).toEqual([]);
  });

  it("parallel identical calls in one AI message: the first runs, the second gets one error ToolMessage", async () => {
    const files = sampleProject();
    let writes = 0;
    const original = files.set.bind(files);
    files.set = (k: string, v: string) => {
      writes += 1;
      return original(k, v);
    };
    const w = { path: "a.py", content: "x" };
    const { messages, fates, toolGuard } = await runTurns(
      [
        [
          { name: "write_to_file", args: w, id: "w1" },
          { name: "write_to_file", args: w, id: "w2" },
        ],
      ],
      { files },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive"]);
    expect(writes).toBe(1);
    expect(files.get("a.py")).toBe("x");
    expect(repliesTo(messages, "w1").map((m) => m.status)).toEqual(["success"]);
    const second = repliesTo(messages, "w2");
    expect(second).toHaveLength(1);
    expect(second[0]?.status).toBe("error");
    expect(guardOf(second[0])).toMatchObject({ blocked: true, rule: "consecutive", escalation: 1 });
    expect(toolGuard.escalation.strikes).toBe(1);
    expect(toolGuard.stats.allowed).toBe(1);
    expect(validHistory(messages)).toEqual([]);
  });

  it("parallel duplicates beside another call, then the same read again: as createReactAgent decides", async () => {
    const { messages, fates } = await runTurns([
      [call("read_file", { path: "app.py" }), call("read_file", { path: "app.py" }), call("list_files", {})],
      [call("read_file", { path: "app.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", "redundant"]);
    expect(validHistory(messages)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Seed 003: feedback, acknowledgment, escalation

const write = { name: "write_file", args: { path: "game.py", content: "import pygame\npygame.init()\n" } };
const near = { ...write, args: { ...write.args, content: "import pygame\npygame.init( )\n" } };
const repeatWrite = (content = "Let me try writing the file again."): ScriptStep => ({ content, toolCalls: [write] });
const writeInput = { messages: [{ role: "user", content: "Write the game." }] };

interface EscalationOptions {
  guard?: GuardMiddlewareOptions;
  /** Default a MemorySaver; false for none. */
  checkpointer?: false;
}

/** A createAgent with seed 003's tools (write_file fails on pygame, update_record always throws) and guardMiddleware. */
function escalationAgent(steps: ScriptStep[], opts: EscalationOptions = {}) {
  const llm = new ScriptedChatModel(steps);
  const agent = createAgent({
    model: llm,
    tools: escalationTools(),
    middleware: [guardMiddleware(seedPace(opts.guard))], // seed 003's table: level 3 at the third duplicate
    ...(opts.checkpointer === false ? {} : { checkpointer: new MemorySaver() }),
  });
  const config = { configurable: { thread_id: randomUUID() }, recursionLimit: 100 };
  return { agent, llm, config };
}

describe("seed 003 (feedback and escalation) through createAgent", () => {
  it("a blocked call's ToolMessage is the seed's feedback, with the previous result", async () => {
    const { agent, config } = escalationAgent([repeatWrite("Writing the game."), repeatWrite(), "Giving up."]);
    const out = await agent.invoke(writeInput, config);
    const messages = out.messages as BaseMessage[];
    const [first, second] = toolReplies(messages);
    expect(first?.status).toBe("error"); // the tool ran and failed
    expect(guardOf(first)).toBeUndefined();
    expect(guardOf(second)).toMatchObject({ blocked: true, rule: "consecutive", escalation: 1 });
    const content = String(second?.content);
    expect(content).toContain("[DUPLICATE TOOL CALL BLOCKED]");
    expect(content).toContain("Previous result for this exact call (it failed):");
    expect(content).toContain("diagnostics_failed");
    expect(content).toContain("What will you do differently");
    expect(String(messages.at(-1)?.content)).toBe("Giving up.");
    expect(validHistory(messages)).toEqual([]);
  });

  it("a throwing tool becomes an error ToolMessage ('Error: …') and the run continues", async () => {
    let seen = "";
    const { agent, config, llm } = escalationAgent([
      { content: "", toolCalls: [{ name: "update_record", args: { id: "r1", fields: { status: "done" } } }] },
      (messages) => {
        seen = String(messages.at(-1)?.content);
        return "The status field is read-only.";
      },
    ]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "Update r1." }] }, config);
    const messages = out.messages as BaseMessage[];
    const [reply] = toolReplies(messages);
    expect(reply?.status).toBe("error");
    expect(reply?.name).toBe("update_record");
    expect(String(reply?.content)).toMatch(/^Error: field 'status' is read-only/);
    expect(guardOf(reply)).toBeUndefined();
    expect(seen).toMatch(/^Error: field 'status' is read-only/); // the model read the error
    expect(llm.stepsTaken).toBe(2);
    expect(String(messages.at(-1)?.content)).toBe("The status field is read-only.");
    expect(validHistory(messages)).toEqual([]);
  });

  it("a differing next action acknowledges the block; a near-repeat without an acknowledgment gets a reminder", async () => {
    expect(similarityRatio(write.args.content, near.args.content)).toBeGreaterThan(0.9);
    const { agent, config } = escalationAgent([
      repeatWrite("Writing the game."),
      repeatWrite(), // strike 1
      { content: "Once more.", toolCalls: [near] }, // does neither: a reminder, not run
      {
        content: "Instead, I will check if pygame is installed first.",
        toolCalls: [{ name: "run", args: { cmd: "pip show pygame" } }],
      },
      "pygame is missing.",
    ]);
    const out = await agent.invoke(writeInput, config);
    const messages = out.messages as BaseMessage[];
    const replies = toolReplies(messages);
    expect(replies.map((r) => guardOf(r)?.rule ?? r.status)).toEqual([
      "error",
      "consecutive",
      "near_duplicate",
      "success",
    ]);
    expect(guardOf(replies[2])?.reminder).toBe(true);
    expect(String(replies[2]?.content)).toContain("[ACKNOWLEDGMENT REQUIRED]");
    const state = out.toolGuard as ToolGuardState;
    // The last response acknowledged by a different call that ran and succeeded: progress, the strikes start again.
    expect(state.escalation).toMatchObject({ strikes: 0, pending: false, reminders: 0 });
    expect(state.stats.reminded).toBe(1);
    expect(validHistory(messages)).toEqual([]);
  });

  it("'Instead, I will …' acknowledges a near-repeat (it runs); 'Let me try … again' is a retry (a reminder)", async () => {
    const respond = async (text: string) => {
      const { agent, config } = escalationAgent([
        repeatWrite("Writing the game."),
        repeatWrite(), // strike 1
        { content: text, toolCalls: [near] },
        "Stopping.",
      ]);
      const out = await agent.invoke(writeInput, config);
      const messages = out.messages as BaseMessage[];
      expect(validHistory(messages)).toEqual([]);
      const replies = toolReplies(messages);
      return {
        fates: replies.map((r) => (guardOf(r)?.reminder ? "reminder" : (guardOf(r)?.rule ?? r.status))),
        last: replies.at(-1),
        state: out.toolGuard as ToolGuardState,
      };
    };
    const acknowledged = await respond("Instead, I will write the game with a spacing fix.");
    // It ran: the tool failed with its own error, no guard answered it.
    expect(acknowledged.fates).toEqual(["error", "consecutive", "error"]);
    expect(String(acknowledged.last?.content)).toContain("diagnostics_failed");
    expect(acknowledged.state.escalation).toMatchObject({ strikes: 1, pending: false });
    expect(acknowledged.state.stats.reminded).toBe(0);

    const retried = await respond("Let me try writing the file again.");
    expect(retried.fates).toEqual(["error", "consecutive", "reminder"]);
    expect(String(retried.last?.content)).toContain("[ACKNOWLEDGMENT REQUIRED]");
    expect(retried.state.escalation).toMatchObject({ strikes: 1, pending: true });
    expect(retried.state.stats.reminded).toBe(1);
  });

  it("strikes 1, 2, 3: level 3 interrupts, a person's answer reaches the model, strike 4 ends the run", async () => {
    let sawAnswer = "";
    const { agent, config, llm } = escalationAgent([
      repeatWrite("Writing the game."),
      repeatWrite(), // strike 1: level 1
      repeatWrite(), // strike 2: level 2
      repeatWrite(), // strike 3: level 3, a person is asked
      (messages) => {
        sawAnswer = String(messages.at(-1)?.content);
        return { content: "Thanks, retrying the write.", toolCalls: [write] }; // strike 4: level 4
      },
      "never reached",
    ]);
    const first = await agent.invoke(writeInput, config);
    const firstMessages = first.messages as BaseMessage[];
    const replies = toolReplies(firstMessages);
    expect(replies.map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2]);
    expect(String(replies[1]?.content)).toContain("What will you do differently?");
    expect(String(replies[2]?.content)).toContain(
      "You've now tried this 2 times. The approach isn't working. Options:",
    );
    expect(String(replies[2]?.content)).toMatch(
      /\[A\] Fix what made it fail first[\s\S]*\[B\] Use another tool: update_record, run/,
    );

    // Level 3: the run waits for a person.
    expect(isInterrupted(first)).toBe(true);
    const ask = isInterrupted(first) ? first.__interrupt__[0]?.value : undefined;
    expect(isEscalationInterrupt(ask)).toBe(true);
    expect(ask).toMatchObject({
      level: 3,
      tool: "write_file",
      args: write.args,
      attempts: 3,
    } satisfies Partial<EscalationInterrupt>);
    const asked = ask as EscalationInterrupt;
    expect(asked.previousResult?.ok).toBe(false);
    expect(asked.previousResult?.text).toContain("diagnostics_failed");
    expect(asked.question).toMatch(/^Stopping automatic execution\./);
    const snapshot = await agent.graph.getState(config);
    expect(snapshot.tasks.flatMap((t) => t.interrupts).map((i) => isEscalationInterrupt(i.value))).toEqual([true]);
    expect(validHistory(firstMessages, { pendingLast: true })).toEqual([]);

    // The person's answer reaches the model as the result of the blocked call.
    const resumed = await agent.invoke(new Command({ resume: "Use pip to install pygame first." }), config);
    expect(sawAnswer).toContain("The user answered:\nUse pip to install pygame first.");

    // Level 4: the run ends with the model's own wrap-up (tools off); the guard's explanation is in its metadata.
    const messages = resumed.messages as BaseMessage[];
    const last = messages.at(-1) as AIMessage;
    expect(AIMessage.isInstance(last)).toBe(true);
    expect(String(last.content)).toMatch(/^I have to stop here\. You asked: "Write/);
    expect(last.tool_calls ?? []).toEqual([]);
    const said = String((last.response_metadata.guard as { message: string }).message);
    expect(said).toMatch(
      /^I stopped this run because I kept repeating one step: I called `write_file` with \{"content":"import pygame\\npygame.init\(\)\\n","path":"game.py"\} again and again, the guards blocked it 4 times in a row/,
    );
    expect(said).toMatch(/\nWhen it last ran, it failed: /);
    expect(said).toMatch(/What you can do:\n- Send a new message/);
    expect(said).not.toMatch(/escalation\.|configurable|guards: false/); // for the end user (issue 61, 12c)
    expect(last.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 4, wrapUp: "model" });
    expect(validHistory(messages)).toEqual([]);
    expect(llm.stepsTaken).toBe(5); // after level 4 the model only wrote the wrap-up (not a step of its script)
    expect((resumed.toolGuard as ToolGuardState).escalation.strikes).toBe(4);
  });

  it('level 3 resumed with { action: "end" } ends the run with the person\'s words; "reset" starts the strikes again', async () => {
    const steps = (): ScriptStep[] => [
      repeatWrite("Writing."),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      "x",
    ];
    const end = escalationAgent(steps());
    const paused = await end.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, end.config);
    expect(isInterrupted(paused)).toBe(true);
    const ended = await end.agent.invoke(new Command({ resume: { answer: "Stop here.", action: "end" } }), end.config);
    const messages = ended.messages as BaseMessage[];
    const firstError = String(toolReplies(messages)[0]?.content)
      .replace(/\s*Please fix your mistakes\.?\s*$/, "")
      .replace(/^Error:\s*/, "");
    expect(String(messages.at(-1)?.content)).toContain(
      'I stopped this run because you asked me to: "Stop here."\nBefore that, I had called `write_file` with ' +
        '{"content":"import pygame\\npygame.init()\\n","path":"game.py"} again and again: the guards blocked it 3 times ' +
        `in a row.\nWhen it last ran, it failed: ${firstError.slice(0, 500).trimEnd()}\n\nWhat you can do:`,
    );
    expect(toolReplies(messages).at(-1)?.content).toBe("Not run: the user ended the run.");
    expect(end.llm.stepsTaken).toBe(4);
    expect(validHistory(messages)).toEqual([]);

    const reset = escalationAgent(steps());
    await reset.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, reset.config);
    const afterReset = await reset.agent.invoke(
      new Command({ resume: { answer: "Try once more, it should work now.", action: "reset" } }),
      reset.config,
    );
    // Strikes start again: the next repeat is level 1 feedback, not the end.
    expect((afterReset.toolGuard as ToolGuardState).escalation.strikes).toBe(1);
    expect(toolReplies(afterReset.messages as BaseMessage[]).map((r) => guardOf(r)?.escalation)).toEqual([
      undefined,
      1,
      2,
      3,
      1,
    ]);
    expect(validHistory(afterReset.messages as BaseMessage[])).toEqual([]);
  });

  it("without a checkpointer, level 3 falls back to level 4 and ends the run", async () => {
    const { agent, llm } = escalationAgent(
      [repeatWrite("Writing."), repeatWrite(), repeatWrite(), repeatWrite(), "x"],
      { checkpointer: false },
    );
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, { recursionLimit: 100 });
    const messages = out.messages as BaseMessage[];
    const guard = (messages.at(-1) as AIMessage).response_metadata.guard as { message: string; wrapUp: string };
    expect(guard.message).toMatch(/^I stopped this run because I kept repeating one step/);
    expect(guard.wrapUp).toBe("model");
    expect(toolReplies(messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2, 4]);
    expect(llm.stepsTaken).toBe(4);
    expect(validHistory(messages)).toEqual([]);
  });

  it("parallel repeats in one response are one strike", async () => {
    const { agent, config } = escalationAgent([
      repeatWrite("Writing."),
      { content: "again", toolCalls: [write, write] },
      "x",
    ]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect((out.toolGuard as ToolGuardState).escalation.strikes).toBe(1);
    expect(toolReplies(out.messages as BaseMessage[]).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 1]);
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Seed 004: loop detection and safety limits

const probe = (fail = false) =>
  tool(
    async ({ target }) => {
      if (fail) throw new Error(`cannot reach ${target}`);
      return `ok ${target}`;
    },
    { name: "probe", description: "probe a component", schema: z.object({ target: z.string() }) },
  );

const TOPICS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];

/** Every turn a new, distinct text and tool call (never a loop). */
function distinctSteps(n: number, final?: string): ScriptStep[] {
  const steps: ScriptStep[] = Array.from({ length: n }, (_, i) => {
    const topic = TOPICS[i % TOPICS.length] ?? "x";
    return {
      content: `Step ${i + 1}: now examining the ${topic} component in depth (${topic.repeat(3)}).`,
      toolCalls: [{ name: "probe", args: { target: `${topic}-${i + 1}` } }],
    };
  });
  return final === undefined ? steps : [...steps, final];
}

const investigate = { messages: [{ role: "user", content: "Investigate." }] };

describe("seed 004 (loop detection and safety limits) through createAgent", () => {
  it("a model that keeps saying nearly the same thing (similarity ≥ 0.9) is stopped with the stop message", async () => {
    const texts = [
      "Let me check the database for user information...",
      "Let me check the database for the user information.",
    ];
    expect(similarityRatio(texts[0] ?? "", texts[1] ?? "")).toBeGreaterThanOrEqual(0.9);
    expect(similarityRatio(texts[0] ?? "", texts[1] ?? "")).toBeLessThan(1);
    let n = 0;
    const llm = new ScriptedChatModel(() => ({
      content: texts[n++ % 2],
      toolCalls: [{ name: "probe", args: { target: "users" } }],
    }));
    const agent = createAgent({
      model: llm,
      tools: [probe()],
      middleware: [loopDetectMiddleware({ feedback: { logger: quiet } })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(investigate, { configurable: { thread_id: randomUUID() }, recursionLimit: 50 });
    const messages = out.messages as BaseMessage[];
    const final = messages.at(-1) as AIMessage;
    // Turn 2 is the first to see the probe's answer; turn 3 says nearly the same after the same answer (issue 63).
    expect(llm.stepsTaken).toBe(3);
    // The stopped response is replaced by the model's own wrap-up (tools off): its call never runs.
    expect(String(final.content)).toMatch(/^I have to stop here\./);
    expect(final.tool_calls ?? []).toEqual([]);
    expect(String((final.response_metadata.guard as { message: string }).message)).toMatch(
      /^Stopped: loop detected, the output is 9\d\.\d% similar to a previous output \(threshold 90%\)\.$/,
    );
    expect(final.response_metadata.guard).toMatchObject({ kind: "loop", limit: 0.9, wrapUp: "model" });
    expect(toolReplies(messages)).toHaveLength(2);
    expect((out.loopGuard as LoopState).stopped?.kind).toBe("loop");
    expect(validHistory(messages)).toEqual([]);
  });

  it("the same output after the same answers stops at the 3rd turn, 100% similar; wrapUp canned: the stop message", async () => {
    const llm = new ScriptedChatModel(() => ({
      content: "Let me probe the alpha component again.",
      toolCalls: [
        { name: "probe", args: { target: "alpha" } },
        { name: "probe", args: { target: "beta" } },
      ],
    }));
    const agent = createAgent({
      model: llm,
      tools: [probe()],
      middleware: [loopDetectMiddleware({ feedback: { logger: quiet }, wrapUp: "canned" })],
    });
    const out = await agent.invoke(investigate, { recursionLimit: 50 });
    const messages = out.messages as BaseMessage[];
    expect(llm.stepsTaken).toBe(3);
    expect(String(messages.at(-1)?.content)).toBe(
      "Stopped: loop detected, the output is 100.0% similar to a previous output (threshold 90%).",
    );
    // The stop message replaced the third response: its two calls never ran and nothing is left to answer.
    expect(aiMessages(messages).map((m) => (m.tool_calls ?? []).length)).toEqual([2, 2, 0]);
    expect(toolReplies(messages)).toHaveLength(4);
    expect(validHistory(messages)).toEqual([]);
  });

  it("varied outputs below the threshold are not stopped: the model reaches its answer", async () => {
    const steps = distinctSteps(6, "All components examined.");
    const texts = steps.slice(0, 6).map((s) => (s as { content: string }).content);
    for (const [i, a] of texts.entries())
      for (const b of texts.slice(i + 1)) expect(similarityRatio(a, b)).toBeLessThan(0.9);
    const llm = new ScriptedChatModel(steps, { whenExhausted: "throw" });
    const agent = createAgent({
      model: llm,
      tools: [probe()],
      middleware: [loopDetectMiddleware({ feedback: { logger: quiet } })],
    });
    const out = await agent.invoke(investigate, { recursionLimit: 100 });
    const messages = out.messages as BaseMessage[];
    expect(llm.stepsTaken).toBe(7);
    expect(String(messages.at(-1)?.content)).toBe("All components examined.");
    expect((out.loopGuard as LoopState).stopped ?? null).toBeNull();
    expect(toolReplies(messages).map((m) => m.status)).toEqual(Array(6).fill("success"));
    expect(validHistory(messages)).toEqual([]);
  });

  it("safetyLimitsMiddleware({ maxIterations: 3 }): 3 full turns, even with identical outputs", async () => {
    for (const steps of [
      distinctSteps(20),
      Array.from(
        { length: 20 },
        (): ScriptStep => ({ content: "Probing alpha.", toolCalls: [call("probe", { target: "a" })] }),
      ),
    ]) {
      const llm = new ScriptedChatModel(steps);
      const agent = createAgent({
        model: llm,
        tools: [probe()],
        middleware: [safetyLimitsMiddleware({ maxIterations: 3, wrapUp: "canned" })],
      });
      const out = await agent.invoke(investigate, { recursionLimit: 100 });
      const messages = out.messages as BaseMessage[];
      const final = messages.at(-1) as AIMessage;
      // maxIterations: N runs N full turns (issue 43, class 9: openai-agents' max_turns, pydantic-ai's
      // request_limit): the 3rd response's call ran; the 4th response was replaced by the stop message.
      expect(llm.stepsTaken).toBe(4);
      expect(String(final.content)).toBe("Stopped: the iteration limit was reached (3 of 3).");
      expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", limit: 3, wrapUp: "canned" });
      expect(toolReplies(messages)).toHaveLength(3);
      expect(validHistory(messages)).toEqual([]);
    }
  });

  it("safetyLimitsMiddleware({ maxConsecutiveFailures: 2 }): two failed turns in a row stop the run", async () => {
    const llm = new ScriptedChatModel(distinctSteps(20));
    const agent = createAgent({
      model: llm,
      tools: [probe(true)],
      middleware: [safetyLimitsMiddleware({ maxConsecutiveFailures: 2 })],
    });
    const out = await agent.invoke(investigate, { recursionLimit: 100 });
    const messages = out.messages as BaseMessage[];
    expect(llm.stepsTaken).toBe(3);
    const final = messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({
      kind: "failures",
      message: "Stopped: 2 failed iterations in a row (limit 2).",
      wrapUp: "model",
    });
    // The model's wrap-up tells what failed; the two calls that ran failed with the tool's error.
    expect(String(final.content)).toMatch(/2 of them failed .*The last problem: Error: cannot reach bravo-2/);
    expect(toolReplies(messages).map((m) => String(m.content).split("\n")[0])).toEqual([
      "Error: cannot reach alpha-1",
      "Error: cannot reach bravo-2",
    ]);
    expect(validHistory(messages)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Seed 001: file tools that serve repeats from a cache

/** A file long enough that a reference to an earlier read is shorter than its content. */
const LONG = Array.from({ length: 40 }, (_, i) => `def f${i}():\n    return ${i}\n`).join("\n");

const projects = tempProjects("lgg-seeds-");

/** A fresh project, its files and folders modified an hour ago. */
function project(): string {
  return projects.project(
    {
      "config.json": '{ "debug": true }\n',
      "src/long.py": LONG,
      "src/main.py": "import utils\n\nprint('hello')\n",
      "src/utils/helper.py": "def help():\n    return 1\n",
      "tests/test_main.py": "def test_main():\n    assert True\n",
    },
    { hourAgo: true },
  );
}

/** createAgent with fileToolsMiddleware and guardMiddleware; the clock far ahead so the cache trusts the stat. */
function fileAgent(root: string, steps: ScriptStep[]) {
  const llm = new ScriptedChatModel(steps, { whenExhausted: "throw" });
  const agent = createAgent({
    model: llm,
    tools: [],
    middleware: [guardMiddleware(), fileToolsMiddleware({ root, clock: () => Date.now() + 10_000 })],
    checkpointer: new MemorySaver(),
  });
  return { agent, llm, config: { configurable: { thread_id: randomUUID() }, recursionLimit: 100 } };
}

interface Cached {
  cached?: boolean;
  content_ref?: string;
}
const artifactOf = (m: ToolMessage | undefined) => m?.artifact as (Cached & { guard?: unknown }) | undefined;
const reply = (messages: BaseMessage[], id: string) => {
  const answers = repliesTo(messages, id);
  expect(answers, `answers to ${id}`).toHaveLength(1);
  return answers[0] as ToolMessage;
};
const one = (name: string, args: Record<string, unknown>, id: string): ScriptStep => ({
  toolCalls: [{ name, args, id }],
});

describe("seed 001 (file tools cache) through createAgent", () => {
  it("read, identical repeat from the cache with a reference, an outside edit read fresh, write then read", async () => {
    const root = project();
    const { agent, config, llm } = fileAgent(root, [
      one("read_file", { path: "src/long.py" }, "r1"),
      one("read_file", { path: "src/long.py" }, "r2"),
      one("read_file", { path: "config.json" }, "r3"),
      () => {
        // Edited outside the tools, right before the model reads it again.
        writeFileSync(join(root, "config.json"), '{ "debug": "edited outside" }\n');
        return { toolCalls: [{ name: "read_file", args: { path: "config.json" }, id: "r4" }] };
      },
      one("write_to_file", { path: "config.json", content: '{ "debug": false }\n' }, "w1"),
      one("read_file", { path: "config.json" }, "r5"),
      "Done.",
    ]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "Read the project." }] }, config);
    const messages = out.messages as BaseMessage[];
    expect(llm.stepsTaken).toBe(7);
    expect(String(messages.at(-1)?.content)).toBe("Done.");

    const r1 = reply(messages, "r1");
    expect(r1.status).toBe("success");
    expect(artifactOf(r1)?.cached).toBe(false);
    expect(String(r1.content)).toContain("def f39():");

    // The identical repeat is not blocked: the cache answers it with a reference to the earlier result.
    const r2 = reply(messages, "r2");
    expect(r2.status).toBe("success");
    expect(artifactOf(r2)?.guard).toBeUndefined();
    expect(artifactOf(r2)).toMatchObject({ cached: true, content_ref: "r1" });
    expect(String(r2.content)).toContain("unchanged since your earlier read");
    expect(String(r2.content).length).toBeLessThan(String(r1.content).length);

    expect(String(reply(messages, "r3").content)).toBe('     1\t{ "debug": true }');
    const r4 = reply(messages, "r4");
    expect(String(r4.content)).toBe('     1\t{ "debug": "edited outside" }');
    expect(artifactOf(r4)?.guard).toBeUndefined();

    expect(reply(messages, "w1").status).toBe("success");
    const r5 = reply(messages, "r5");
    expect(String(r5.content)).toBe('     1\t{ "debug": false }');
    expect(artifactOf(r5)?.guard).toBeUndefined();

    const cache = out.fileCache as FileCacheState;
    expect(cache.stats.hits).toBeGreaterThanOrEqual(1);
    expect(cache.stats.staleRefreshes).toBe(1);
    expect(validHistory(messages)).toEqual([]);
  });

  it("a reference is used only while the earlier result is in the history", async () => {
    /** Two runs on one thread, each reading src/long.py; before the second, the first read is trimmed or kept. */
    const twoReads = async (trim: boolean) => {
      const { agent, config } = fileAgent(project(), [
        one("read_file", { path: "src/long.py" }, "a1"),
        "Read it.",
        one("read_file", { path: "src/long.py" }, "a2"),
        "Read it again.",
      ]);
      const first = await agent.invoke({ messages: [{ role: "user", content: "Read long.py." }] }, config);
      const firstMessages = first.messages as BaseMessage[];
      const a1 = reply(firstMessages, "a1");
      // The first read's AI message and its result, removed from the conversation.
      const asked = aiMessages(firstMessages).find((m) => m.tool_calls?.some((c) => c.id === "a1"));
      const removed = [new RemoveMessage({ id: asked?.id as string }), new RemoveMessage({ id: a1.id as string })];
      const out = await agent.invoke(
        { messages: [...(trim ? removed : []), new HumanMessage("Read it again.")] },
        config,
      );
      const messages = out.messages as BaseMessage[];
      expect(validHistory(messages)).toEqual([]);
      expect(repliesTo(messages, "a1")).toHaveLength(trim ? 0 : 1);
      return { a1, a2: reply(messages, "a2") };
    };
    const kept = await twoReads(false);
    expect(artifactOf(kept.a2)).toMatchObject({ cached: true, content_ref: "a1" });
    const trimmed = await twoReads(true);
    expect(artifactOf(trimmed.a2)?.content_ref).toBeUndefined();
    expect(artifactOf(trimmed.a2)?.guard).toBeUndefined();
    expect(String(trimmed.a2.content)).toBe(String(trimmed.a1.content));
  });

  it("list_files: one scan serves later listings (cached); a write shows in the next listing", async () => {
    const root = project();
    const { agent, config } = fileAgent(root, [
      one("list_files", { path: "src", recursive: false }, "l1"),
      one("list_files", { path: "tests", recursive: true }, "l2"),
      one("list_files", { path: "src", recursive: false }, "l3"),
      one("write_to_file", { path: "src/new_module.py", content: "x = 1\n" }, "w1"),
      one("list_files", { path: "src", recursive: false }, "l4"),
      "Listed.",
    ]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "List the project." }] }, config);
    const messages = out.messages as BaseMessage[];
    expect(String(reply(messages, "l1").content)).toBe("long.py\nmain.py\nutils/");
    const l2 = reply(messages, "l2");
    expect(String(l2.content)).toBe("test_main.py");
    expect(artifactOf(l2)?.cached).toBe(true);
    const l3 = reply(messages, "l3");
    expect(artifactOf(l3)?.cached).toBe(true);
    expect(artifactOf(l3)?.guard).toBeUndefined(); // a repeat listing is not blocked as redundant
    expect(String(l3.content)).toBe("long.py\nmain.py\nutils/");
    expect(String(reply(messages, "l4").content)).toBe("long.py\nmain.py\nnew_module.py\nutils/");
    expect(Object.keys((out.fileCache as FileCacheState).tree ?? {})).toEqual(
      expect.arrayContaining(["", "src", "src/utils", "tests"]),
    );
    expect(validHistory(messages)).toEqual([]);
  });
});
