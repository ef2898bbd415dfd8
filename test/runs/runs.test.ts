/**
 * A new person's message starts a new run: a call repeated once per user turn is not a loop (issue: run boundary).
 * The same in the tool node + hook (createReactAgent), the middleware (createAgent) and replay.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { runMarker } from "../../src/common/messages.js";
import {
  createFileTools,
  escalationHook,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  type GuardLog,
  GuardMessagesState,
  type ToolGuardState,
} from "../../src/index.js";
import { fileToolsMiddleware, guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayGuards } from "../../src/replay/index.js";
import { validHistory } from "../support/escalation.js";
import { type CallFate, fatesOf } from "../support/helpers.js";
import { chatModel, failingWeather, repeatingModel, weather } from "./support.js";

type Agent = { invoke(input: unknown, config: unknown): Promise<Record<string, unknown>> };
const paris = { name: "get_weather", args: { city: "Paris" } };
const guardMeta = (m: BaseMessage) =>
  (m.response_metadata as { guard?: { level?: number; strikes?: number } } | undefined)?.guard;

function reactAgent(
  model: ReturnType<typeof chatModel>,
  tools: ConstructorParameters<typeof GuardedToolNode>[0],
  options: GuardedToolNodeOptions = {},
) {
  const node = new GuardedToolNode(tools, options);
  return createReactAgent({
    llm: model,
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node, { interrupt: false }),
    checkpointer: new MemorySaver(),
  }) as unknown as Agent;
}

function middlewareAgent(
  model: ReturnType<typeof chatModel>,
  tools: (typeof weather)[],
  options: GuardedToolNodeOptions = {},
  extra: unknown[] = [],
) {
  return createAgent({
    model,
    tools,
    middleware: [guardMiddleware({ ...options, interrupt: false }), ...(extra as never[])],
    checkpointer: new MemorySaver(),
  }) as unknown as Agent;
}

/** Sends `turns` user messages on one thread; returns the fates of each turn's calls and the last state. */
async function chat(agent: Agent, turns: number, text = "Weather in Paris?") {
  const config = { configurable: { thread_id: "chat" }, recursionLimit: 100 };
  const perTurn: CallFate[][] = [];
  let seen = 0;
  let out: Record<string, unknown> = {};
  for (let i = 0; i < turns; i += 1) {
    out = await agent.invoke({ messages: [{ role: "user", content: `${text} (${i + 1})` }] }, config);
    const messages = out.messages as BaseMessage[];
    perTurn.push(fatesOf(messages.slice(seen)));
    seen = messages.length;
  }
  return { perTurn, out, messages: out.messages as BaseMessage[] };
}

const adapters = {
  "createReactAgent + GuardedToolNode + escalationHook": (options: GuardedToolNodeOptions = {}) =>
    reactAgent(chatModel(paris), [weather], options),
  "createAgent + guardMiddleware": (options: GuardedToolNodeOptions = {}) =>
    middlewareAgent(chatModel(paris), [weather], options),
};

describe("run boundary: a new person's message starts a new run", () => {
  for (const [name, make] of Object.entries(adapters)) {
    it(`[${name}] 11 user turns, one identical read each: every read runs, nothing blocked, nothing escalates`, async () => {
      const { perTurn, out, messages } = await chat(make(), 11);
      expect(perTurn.map((fates) => fates.map((f) => f.fate))).toEqual(Array(11).fill(["ran"]));
      expect(validHistory(messages)).toEqual([]);
      const guard = out.toolGuard as ToolGuardState;
      expect(guard.stats.allowed).toBe(11); // thread counters stay across runs
      expect(Object.values(guard.stats.blocked).every((n) => n === 0)).toBe(true);
      expect(guard.escalation.strikes).toBe(0);
      const lastHuman = [...messages].reverse().find((m) => m.getType() === "human");
      expect(guard.run).toBe(lastHuman?.id);
      expect(messages.some((m) => guardMeta(m) !== undefined)).toBe(false);
      expect((out.guardLog as GuardLog | undefined)?.counts.blocked ?? 0).toBe(0);
    });

    it(`[${name}] runBoundary: "none" keeps the old behaviour: the thread is one run`, async () => {
      const { perTurn } = await chat(make({ memory: { runBoundary: "none" } }), 3);
      expect(perTurn.map((fates) => fates.map((f) => f.fate))).toEqual([["ran"], ["consecutive"], ["consecutive"]]);
    });

    it(`[${name}] acrossRuns: "keep" keeps a valid read: the next run's identical read is redundant`, async () => {
      // The model reads Paris, then London, each turn: not consecutive, so only the redundant rule can block it.
      const turns = [paris, { name: "get_weather", args: { city: "London" } }];
      const { perTurn } = await chat(
        name.startsWith("createAgent")
          ? middlewareAgent(chatModel2(turns), [weather], { memory: { acrossRuns: "keep" } })
          : reactAgent(chatModel2(turns), [weather], { memory: { acrossRuns: "keep" } }),
        2,
      );
      expect(perTurn.map((fates) => fates.map((f) => f.fate))).toEqual([
        ["ran", "ran"],
        ["redundant", "redundant"],
      ]);
    });
  }

  it("within one run the guards block as before; after 'try again' the new run catches the loop by its own repeats", async () => {
    for (const agent of [
      reactAgent(repeatingModel(paris), [failingWeather]),
      middlewareAgent(repeatingModel(paris), [failingWeather]),
    ]) {
      const { perTurn, messages } = await chat(agent, 2, "Try again");
      // Strikes 1, 2, 3 (held at level 2: the 4th identical call), 4: the 5th identical call reaches level 3, which
      // without interrupt ends the run (issue 43, class 8: no stop before the 5th identical call).
      const run = ["failed", "consecutive", "consecutive", "consecutive", "consecutive"];
      expect(perTurn.map((fates) => fates.map((f) => f.fate))).toEqual([run, run]);
      const ends = messages.filter((m) => AIMessage.isInstance(m) && guardMeta(m)?.level === 4);
      expect(ends.map((m) => guardMeta(m)?.strikes)).toEqual([4, 4]);
      expect(validHistory(messages)).toEqual([]);
    }
  });

  it("escalation.carryStrikes: true carries escalation into the next run (default: each run starts afresh)", async () => {
    // Each person's message: the failing call, its repeat (blocked), then an answer.
    const twoRuns = async (options: GuardedToolNodeOptions) => {
      const agent = reactAgent(chatModel2([paris, paris]), [failingWeather], options);
      const { perTurn, out } = await chat(agent, 2, "Try again");
      return { fates: perTurn.map((fates) => fates.map((f) => f.fate)), guard: out.toolGuard as ToolGuardState };
    };
    const fresh = await twoRuns({});
    expect(fresh.fates).toEqual([
      ["failed", "consecutive"],
      ["failed", "consecutive"],
    ]);
    expect(fresh.guard.escalation.strikes).toBe(1);
    // Carried: the blocked call is still owed an acknowledgment; repeating it in the next run is strike 2, then 3.
    const carried = await twoRuns({ escalation: { carryStrikes: true } });
    expect(carried.fates).toEqual([
      ["failed", "consecutive"],
      ["near_duplicate", "near_duplicate"],
    ]);
    expect(carried.guard.escalation.strikes).toBe(3);
  });

  it("file tools: the repeated read in each user turn runs or is answered from the cache, never blocked", async () => {
    const root = mkdtempSync(join(tmpdir(), "lgg-runs-"));
    writeFileSync(join(root, "status.txt"), "all systems nominal\n".repeat(20));
    const later = Date.now() + 10_000;
    const read = { name: "read_file", args: { path: "status.txt" } };
    const react = reactAgent(chatModel(read), createFileTools({ root, clock: () => later }));
    const viaMiddleware = createAgent({
      model: chatModel(read),
      tools: [],
      middleware: [guardMiddleware(), fileToolsMiddleware({ root, clock: () => later })],
      checkpointer: new MemorySaver(),
    }) as unknown as Agent;
    for (const agent of [react, viaMiddleware]) {
      const { messages } = await chat(agent, 11, "Status?");
      const answers = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
      expect(answers).toHaveLength(11);
      for (const a of answers) {
        expect(a.status).toBe("success");
        expect((a.artifact as { guard?: unknown }).guard).toBeUndefined();
      }
      // The first read has the content; the others refer to it (it is still in the conversation).
      expect((answers[0]?.artifact as { cached: boolean } | undefined)?.cached).toBe(false);
      expect(answers.slice(1).every((a) => (a.artifact as { cached: boolean }).cached)).toBe(true);
      expect(validHistory(messages)).toEqual([]);
    }
  });

  it("a run is marked by the turn that answers the person: the turns after it go on with that run", () => {
    const messages: BaseMessage[] = [new HumanMessage({ id: "h1", content: "task" })];
    for (let turn = 0; turn < 6; turn += 1) {
      if (turn === 3) messages.push(new HumanMessage({ id: "h2", content: "and then?" }));
      messages.push(new AIMessage({ id: `a${turn}`, content: "", tool_calls: [] }));
      expect(runMarker(messages)).toBe(turn === 0 ? "h1" : turn === 3 ? "h2" : undefined);
      messages.push(new ToolMessage({ content: "ok", tool_call_id: `c${turn}` }));
    }
    // Before the model is called (the loop guard's iteration check): the person's message is the last one.
    expect(runMarker([...messages, new HumanMessage({ id: "h3", content: "more" })])).toBe("h3");
    expect(runMarker(messages)).toBeUndefined();
  });

  it("a summary (summarizationMiddleware's human message) is not a person's message: the run goes on", () => {
    const person = new HumanMessage({ id: "h1", content: "Weather?" });
    const summary = new HumanMessage({
      id: "s1",
      content: "Here is a summary of the conversation to date: ...",
      additional_kwargs: { lc_source: "summarization" },
    });
    expect(runMarker([person, new AIMessage("ok")])).toBe("h1");
    expect(runMarker([person, summary, new AIMessage("ok")])).toBe("h1");
    // Everything summarized away: no marker, the current run goes on.
    expect(runMarker([summary, new AIMessage("ok")])).toBeUndefined();
  });

  it("a summary of one's own (a plain human message) placed before the kept turns is not a new run", () => {
    const summary = new HumanMessage({ id: "s1", content: "Summary so far: searching for TODOs." });
    const kept = [
      new AIMessage({ id: "a1", content: "", tool_calls: [] }),
      new ToolMessage({ content: "ok", tool_call_id: "c1" }),
    ];
    expect(runMarker([summary, ...kept, new AIMessage("next")])).toBeUndefined();
    // A message without an id is marked by its position and content, as before.
    const anonymous = new HumanMessage("No id");
    expect(runMarker([anonymous, new AIMessage("hi")])).toMatch(/^0:[0-9a-f]{32}$/);
    expect(runMarker([new HumanMessage({ id: "h0", content: "Zeroth" }), anonymous, new AIMessage("hi")])).toMatch(
      /^1:[0-9a-f]{32}$/,
    );
  });

  it("replay: a recorded run with several user messages repeats one read per message: nothing blocked", () => {
    const steps: ReplayRun["steps"] = [];
    for (let i = 0; i < 11; i += 1) {
      steps.push({ role: "user", text: `Weather in Paris? (${i + 1})` });
      steps.push({
        role: "assistant",
        text: "",
        tool_calls: [{ name: "get_weather", args: { city: "Paris" }, id: `c${i}` }],
      });
      steps.push({ role: "tool", tool_call_id: `c${i}`, ok: true, text: "Sunny in Paris" });
      steps.push({ role: "assistant", text: "Here you are." });
    }
    const run: ReplayRun = { id: "chat", steps };
    const fresh = replayGuards(run);
    expect(fresh.decisions.map((d) => d.action)).toEqual(Array(11).fill("allow"));
    const oneRun = replayGuards(run, { memory: { runBoundary: "none" } });
    expect(oneRun.decisions.map((d) => d.action).slice(0, 3)).toEqual(["allow", "block", "block"]);
  });
});

/** A chat model that makes `calls` (one per response) after each person's message, then answers. */
function chatModel2(calls: { name: string; args: Record<string, unknown> }[]) {
  let next = 0;
  return chatModelFrom((messages) => {
    if (messages.at(-1)?.getType() === "human") next = 0;
    return next < calls.length ? { toolCalls: [calls[next++] as never] } : "Here you are.";
  });
}

import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";

function chatModelFrom(step: StepResponder) {
  return new ScriptedChatModel(step);
}
