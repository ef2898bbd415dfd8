import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import {
  GuardedToolNode,
  GuardMessagesState,
  isLimitInterrupt,
  type LimitInterrupt,
  loopDetectHook,
} from "../../src/index.js";
import type { LoopState } from "../../src/loop/core/loop.js";
import { guardMiddleware, loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayGuards, replayLoopDetector } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";
import { endless, work } from "./support.js";

const N = 3;
const quiet = { logger: { warn: () => undefined } };
/** N turns of work, each a new step, then the answer. */
const exactlyN = () =>
  new ScriptedChatModel([
    ...Array.from({ length: N }, (_, n): ScriptStep => ({ content: "", toolCalls: [{ name: "work", args: { n } }] })),
    "All three steps are done.",
  ]);
const input = { messages: [{ role: "user", content: "Do all the steps." }] };
/** The tool calls that ran (not answered by a guard). */
const ran = (messages: BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && !(m.artifact as { guard?: unknown } | undefined)?.guard).length;
const asked = (out: unknown): LimitInterrupt | undefined =>
  isInterrupted(out) ? (out.__interrupt__.map((i) => i.value).find(isLimitInterrupt) as LimitInterrupt) : undefined;

type Limits = "safetyLimits" | "loopDetect";
function viaCreateAgent(llm: ScriptedChatModel, limits: Limits, options: { ask?: boolean } = {}) {
  const middleware =
    limits === "safetyLimits"
      ? safetyLimitsMiddleware({ maxIterations: N, ...options })
      : loopDetectMiddleware({ maxIterations: N, feedback: quiet, ...options });
  return createAgent({ model: llm, tools: [work], middleware: [guardMiddleware(), middleware] });
}

function viaCreateReactAgent(llm: ScriptedChatModel, options: { ask?: boolean } = {}) {
  return createReactAgent({
    llm,
    tools: new GuardedToolNode([work]),
    stateSchema: GuardMessagesState,
    postModelHook: loopDetectHook({ maxIterations: N, feedback: quiet, ...options }),
  });
}

/** A recorded run: `turns` turns of work (each a new step), then the answer when `answers`. */
function recorded(turns: number, answers: boolean): ReplayRun {
  const steps: ReplayRun["steps"] = [{ role: "user", text: "Do all the steps." }];
  for (let n = 0; n < turns; n += 1) {
    steps.push({ role: "assistant", text: `Step ${n}.`, tool_calls: [{ name: "work", args: { n } }] });
    steps.push({ role: "tool", ok: true, text: `step ${n} done` });
  }
  if (answers) steps.push({ role: "assistant", text: "All the steps are done." });
  return { id: `work-${turns}`, steps };
}

describe("issue 43, class 9: maxIterations: N runs N full turns", () => {
  for (const limits of ["safetyLimits", "loopDetect"] as const) {
    it(`createAgent + ${limits}Middleware: the Nth turn's call runs, the turn after is the model's wrap-up`, async () => {
      const llm = endless();
      const out = await viaCreateAgent(llm, limits).invoke(input, { recursionLimit: 100 });
      const messages = out.messages as BaseMessage[];
      expect(ran(messages)).toBe(N);
      const final = messages.at(-1) as AIMessage;
      expect(final.tool_calls ?? []).toEqual([]);
      expect(String(final.content)).toMatch(/^I have to stop here\./);
      expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", value: N, limit: N, wrapUp: "model" });
      expect(llm.stepsTaken).toBe(N + 1); // the (N+1)th response asked for tools: replaced, its call never ran
      expect(validHistory(messages)).toEqual([]);
    });

    it(`createAgent + ${limits}Middleware: N turns of work and the answer: every call runs, not stopped`, async () => {
      const out = await viaCreateAgent(exactlyN(), limits).invoke(input, { recursionLimit: 100 });
      const messages = out.messages as BaseMessage[];
      expect(ran(messages)).toBe(N);
      expect((messages.at(-1) as AIMessage).content).toBe("All three steps are done.");
      const state = (out as Record<string, unknown>)[limits === "safetyLimits" ? "safetyLimits" : "loopGuard"];
      expect((state as LoopState).stopped).toBeNull();
    });
  }

  it("createReactAgent + loopDetectHook: the Nth turn's call runs, the (N+1)th response's call is not run", async () => {
    const llm = endless();
    const out = await viaCreateReactAgent(llm).invoke(input, { recursionLimit: 100 });
    const messages = out.messages as BaseMessage[];
    expect(ran(messages)).toBe(N);
    expect(llm.stepsTaken).toBe(N + 1);
    const final = messages.at(-1) as AIMessage;
    expect(String(final.content)).toBe(`Stopped: the iteration limit was reached (${N} of ${N}).`);
    expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", value: N, limit: N });
    expect(out.loopGuard.stopped?.kind).toBe("iterations");
    expect(validHistory(messages)).toEqual([]);
  });

  it("createReactAgent + loopDetectHook: N turns of work and the answer: every call runs, not stopped", async () => {
    const out = await viaCreateReactAgent(exactlyN()).invoke(input, { recursionLimit: 100 });
    const messages = out.messages as BaseMessage[];
    expect(ran(messages)).toBe(N);
    expect((messages.at(-1) as AIMessage).content).toBe("All three steps are done.");
    expect(out.loopGuard.stopped).toBeNull();
  });

  it("replay: the stop comes at turn N + 1; a run of N turns of work and the answer is not stopped", () => {
    const endlessRun = recorded(N + 2, false);
    const loop = replayLoopDetector(endlessRun, { maxIterations: N, ...quiet });
    expect(loop.stop).toMatchObject({ kind: "iterations", value: N, limit: N });
    expect(loop.turn).toBe(N + 1);
    expect(loop.callsAfter).toBe(2); // turns N+1 and N+2 would not have run
    expect(replayGuards(endlessRun, { loop: { maxIterations: N, ...quiet } }).loop?.turn).toBe(N + 1);

    const finished = recorded(N, true);
    expect(replayLoopDetector(finished, { maxIterations: N, ...quiet }).stop).toBeNull();
    expect(replayGuards(finished, { loop: { maxIterations: N, ...quiet } }).loop?.stop).toBeNull();
  });

  it("a loop is still stopped before the limit: identical turns after the same answer end the run at the 3rd", async () => {
    const same: ScriptStep = { content: "Probing step one again.", toolCalls: [{ name: "work", args: { n: 1 } }] };
    const llm = new ScriptedChatModel(Array.from({ length: 10 }, () => same));
    const out = await viaCreateReactAgent(llm).invoke(input, { recursionLimit: 100 });
    expect(out.loopGuard.stopped?.kind).toBe("loop");
    // Turn 2 is the first to see the answer (issue 63); turn 3 repeats it, one turn before the limit (N = 3).
    expect(llm.stepsTaken).toBe(3);
  });
});

describe("issue 43, class 9: a limit that asks still asks before a turn is taken away, once", () => {
  it("createReactAgent: asked at the (N+1)th response, after N full turns; going on runs it", async () => {
    const llm = endless();
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode([work]),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ maxIterations: N, ask: { iterations: 2 }, feedback: quiet }),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "full-turns-ask-react" }, recursionLimit: 100 };
    const first = await agent.invoke(input, config);
    expect(asked(first)).toMatchObject({ limit: "iterations", value: N, max: N, more: 2 });
    expect(ran(first.messages as BaseMessage[])).toBe(N);
    const second = await agent.invoke(new Command({ resume: true }), config);
    // The answer raised the limit to N + 2: the (N+1)th and (N+2)th turns ran, the next question is about N + 2.
    expect(asked(second)).toMatchObject({ value: N + 2, max: N + 2 });
    expect(ran(second.messages as BaseMessage[])).toBe(N + 2);
    expect(llm.stepsTaken).toBe(N + 3);
  });

  it("createAgent: asked before the (N+1)th model call, after N full turns; the resume calls the model once", async () => {
    const llm = endless();
    const agent = createAgent({
      model: llm,
      tools: [work],
      middleware: [guardMiddleware(), safetyLimitsMiddleware({ maxIterations: N, ask: { iterations: 1 } })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "full-turns-ask-agent" }, recursionLimit: 100 };
    const first = await agent.invoke(input, config);
    expect(asked(first)).toMatchObject({ limit: "iterations", value: N, max: N, more: 1 });
    expect(ran(first.messages as BaseMessage[])).toBe(N);
    expect(llm.stepsTaken).toBe(N);
    const second = await agent.invoke(new Command({ resume: true }), config);
    expect(asked(second)).toMatchObject({ value: N + 1, max: N + 1 });
    expect(ran(second.messages as BaseMessage[])).toBe(N + 1);
    expect(llm.stepsTaken).toBe(N + 1);
    const third = await agent.invoke(new Command({ resume: "no" }), config);
    const messages = third.messages as BaseMessage[];
    expect((messages.at(-1) as AIMessage).response_metadata.guard).toMatchObject({ kind: "iterations", value: N + 1 });
    expect(ran(messages)).toBe(N + 1);
    expect(llm.stepsTaken).toBe(N + 1); // the end is the wrap-up (tools off), no turn of the script
    expect(validHistory(messages)).toEqual([]);
  });
});
