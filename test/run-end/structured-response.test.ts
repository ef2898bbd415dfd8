/**
 * Issue 45, item 8: a createAgent run with a `responseFormat` that the guards end. The model's wrap-up is asked in
 * the requested format (only the format's tool bound, or the provider's JSON schema), so `structuredResponse` is set
 * as at a normal end, and the final message still says in words why the run ended. When no structured response can
 * be given (`wrapUp: "canned"`, a chat model of the user's own, a wrap-up that does not fit the format, a person who
 * ended the run), the verdict says so (`structuredResponse: "missing"`), and a format the model failed is not retried
 * (langchain's retry would call the model again after the end).
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { Annotation, Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent, providerStrategy, toolStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, guardVerdict } from "../../src/index.js";
import { guardMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { WRAP_UP_ID } from "../../src/run-end/wrap-up.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { type TestAgent, text, work } from "./agents.js";

const Answer = z.object({ summary: z.string(), done: z.number() });

/** What the model was asked for its wrap-ups: the tools bound and the tool choice of each call that asked. */
interface Asked {
  tools: string[];
  choice: unknown;
}

/**
 * A model that works forever (a new `work` call each turn) and, asked to wrap up, answers in the requested format:
 * a call of the format's tool (the one tool bound), or JSON text when no tool is bound (the provider's format).
 * `answer` gives the structured answer (default: a valid one).
 */
class FormatModel extends ScriptedChatModel {
  bound: string[] = [];
  choice: unknown;
  readonly asked: Asked[] = [];
  calls = 0;

  constructor(
    answer: (done: number) => Record<string, unknown> = (done) => ({ summary: `${done} steps`, done }),
    repeat = false,
  ) {
    let n = 0;
    super((messages: BaseMessage[]) => {
      this.calls += 1;
      if (messages.at(-1)?.id !== WRAP_UP_ID) {
        return { content: `Next: step ${n}`, toolCalls: [{ name: "work", args: { n: repeat ? 0 : n++ } }] };
      }
      this.asked.push({ tools: [...this.bound], choice: this.choice });
      const args = answer(messages.filter((m) => m.getType() === "tool").length);
      const format = this.bound.find((t) => t !== "work");
      if (format === undefined) return { content: JSON.stringify(args) };
      return { content: "", toolCalls: [{ name: format, args }] };
    });
  }

  override bindTools(tools: Parameters<ScriptedChatModel["bindTools"]>[0], kwargs?: Record<string, unknown>) {
    this.bound = tools.map(
      (t) => (t as { function?: { name?: string } }).function?.name ?? (t as { name?: string }).name ?? "",
    );
    this.choice = kwargs?.tool_choice;
    return super.bindTools(tools, kwargs as never);
  }
}

interface StructuredResult {
  messages: BaseMessage[];
  structuredResponse?: unknown;
}

async function run(
  model: FormatModel,
  responseFormat: unknown,
  middleware: unknown[],
  recursionLimit = 12,
): Promise<StructuredResult> {
  const agent = createAgent({
    model,
    tools: [work],
    responseFormat: responseFormat as never,
    middleware: middleware as never,
  }) as unknown as TestAgent;
  return (await agent.invoke(
    { messages: [new HumanMessage("Do the task.")] },
    { recursionLimit, configurable: { thread_id: "t" } },
  )) as StructuredResult;
}

/** An agent whose guard asks a person (a checkpointer keeps the paused run). */
function escalating(model: FormatModel) {
  const agent = createAgent({
    model,
    tools: [work],
    responseFormat: toolStrategy(Answer),
    middleware: [guardMiddleware()],
    checkpointer: new MemorySaver(),
  });
  return { agent, config: { recursionLimit: 100, configurable: { thread_id: "esc" } } };
}

const last = (r: StructuredResult) => r.messages.at(-1) as AIMessage;

describe("a guard ends a createAgent run that has a responseFormat", () => {
  it("the step budget: the wrap-up comes in the format (tool strategy), the final message says why in words", async () => {
    const model = new FormatModel();
    const r = await run(model, toolStrategy(Answer), [guardMiddleware()]);
    expect(r.structuredResponse).toMatchObject({ summary: expect.stringMatching(/steps$/) });
    // Asked with only the format's tool bound, and made to call it.
    expect(model.asked).toHaveLength(1);
    expect(model.asked[0]?.tools.includes("work")).toBe(false);
    expect(model.asked[0]?.tools).toHaveLength(1);
    const verdict = guardVerdict(r);
    expect(verdict).toMatchObject({ guard: "steps", wrapUp: "model", structuredResponse: "given" });
    expect(text(last(r))).toBe(verdict?.message);
    expect(AIMessage.isInstance(last(r)) && (last(r).tool_calls ?? []).length).toBe(0);
  });

  it("a schema given as is (langchain picks the tool strategy for a model without native output)", async () => {
    const r = await run(new FormatModel(), Answer, [guardMiddleware()]);
    expect(r.structuredResponse).toMatchObject({ done: expect.any(Number) });
    expect(guardVerdict(r)).toMatchObject({ guard: "steps", structuredResponse: "given" });
  });

  it("the provider's format: no tool bound, the JSON answer parsed", async () => {
    const model = new FormatModel();
    const r = await run(model, providerStrategy(Answer), [guardMiddleware()]);
    expect(model.asked[0]?.tools).toEqual([]);
    expect(r.structuredResponse).toMatchObject({ summary: expect.any(String) });
    expect(guardVerdict(r)).toMatchObject({ guard: "steps", structuredResponse: "given" });
  });

  it("a safety limit (iterations) ends the run with the structured response", async () => {
    const model = new FormatModel();
    const r = await run(model, toolStrategy(Answer), [safetyLimitsMiddleware({ maxIterations: 3 })], 100);
    expect(r.structuredResponse).toEqual({ summary: "3 steps", done: 3 });
    expect(guardVerdict(r)).toMatchObject({ guard: "limits", rule: "iterations", structuredResponse: "given" });
  });

  it("a wrap-up that does not fit the format: not retried, the canned message, the response missing", async () => {
    const model = new FormatModel(() => ({ summary: 5 }));
    const r = await run(model, toolStrategy(Answer), [safetyLimitsMiddleware({ maxIterations: 3 })], 100);
    expect(r.structuredResponse).toBeUndefined();
    expect(guardVerdict(r)).toMatchObject({ rule: "iterations", wrapUp: "canned", structuredResponse: "missing" });
    // 4 turns, then the one wrap-up call: no retry of the format after the end.
    expect(model.calls).toBe(5);
  });

  it('wrapUp "canned": no model call, and the verdict says the structured response is missing', async () => {
    const model = new FormatModel();
    const r = await run(model, toolStrategy(Answer), [guardMiddleware({ wrapUp: "canned" })]);
    expect(model.asked).toHaveLength(0);
    expect(r.structuredResponse).toBeUndefined();
    expect(guardVerdict(r)).toMatchObject({ guard: "steps", wrapUp: "canned", structuredResponse: "missing" });
  });

  it("a wrap-up model of the user's own answers in words: the response is missing, and said so", async () => {
    const own = { invoke: async () => new AIMessage("I stopped: the step budget ran out.") };
    const r = await run(new FormatModel(), toolStrategy(Answer), [guardMiddleware({ wrapUp: { model: own } })]);
    expect(r.structuredResponse).toBeUndefined();
    expect(guardVerdict(r)).toMatchObject({ wrapUp: "model", structuredResponse: "missing" });
    expect(text(last(r))).toBe("I stopped: the step budget ran out.");
  });

  it("the escalation: a call repeated, the person asked, then the end at level 4 with the structured response", async () => {
    const model = new FormatModel(undefined, true);
    const { agent, config } = escalating(model);
    const paused = await agent.invoke({ messages: [new HumanMessage("Do the task.")] }, config);
    expect(isInterrupted(paused)).toBe(true);
    const r = (await agent.invoke(new Command({ resume: "Try once more." }), config)) as StructuredResult;
    expect(r.structuredResponse).toMatchObject({ summary: expect.any(String) });
    expect(guardVerdict(r)).toMatchObject({
      guard: "tool-calls",
      level: 4,
      wrapUp: "model",
      structuredResponse: "given",
    });
  });

  it("a person who ends the run at level 3: their words, no model call, the response missing", async () => {
    const model = new FormatModel(undefined, true);
    const { agent, config } = escalating(model);
    await agent.invoke({ messages: [new HumanMessage("Do the task.")] }, config);
    const r = (await agent.invoke(
      new Command({ resume: { answer: "Stop here.", action: "end" } }),
      config,
    )) as StructuredResult;
    expect(model.asked).toHaveLength(0);
    expect(r.structuredResponse).toBeUndefined();
    expect(guardVerdict(r)).toMatchObject({ byPerson: true, structuredResponse: "missing" });
  });

  it("without a responseFormat the verdict has no structuredResponse field", async () => {
    const r = await run(new FormatModel(), undefined, [guardMiddleware()]);
    expect(guardVerdict(r)?.guard).toBe("steps");
    expect(guardVerdict(r)?.structuredResponse).toBeUndefined();
  });
});

/**
 * createReactAgent makes the structured response itself, in a node after the final message
 * (`generate_structured_response`): a hook that ends the run must leave that step too, or LangGraph throws
 * `GraphRecursionError` where the run should end in words.
 */
describe("a hook ends a createReactAgent run that has a responseFormat", () => {
  class StructuredModel extends ScriptedChatModel {
    structuredCalls = 0;
    // biome-ignore lint/suspicious/noExplicitAny: the base method's overloads, answered for the one form createReactAgent calls
    override withStructuredOutput(): any {
      return RunnableLambda.from(async (input: BaseMessage[]) => {
        this.structuredCalls += 1;
        return { summary: `${input.filter((m) => m.getType() === "tool").length} results`, done: 0 };
      });
    }
  }
  const State = Annotation.Root({
    ...GuardMessagesState.spec,
    structuredResponse: Annotation<Record<string, unknown>>,
  });

  it.each([9, 12, 13, 25])(
    "the step budget at recursionLimit %i: the run ends in words, then the structured response",
    async (recursionLimit) => {
      let n = 0;
      const llm = new StructuredModel(() => ({
        content: `Next ${n}`,
        toolCalls: [{ name: "work", args: { n: n++ } }],
      }));
      const tools = new GuardedToolNode([work]);
      const agent = createReactAgent({
        llm,
        tools,
        stateSchema: State,
        responseFormat: Answer,
        postModelHook: escalationHook(tools),
      });
      const r = (await agent.invoke(
        { messages: [new HumanMessage("Do the task.")] },
        { recursionLimit },
      )) as StructuredResult;
      expect(guardVerdict(r)).toMatchObject({ guard: "steps", limit: recursionLimit });
      expect(r.structuredResponse).toMatchObject({ summary: expect.stringMatching(/results$/) });
      expect(llm.structuredCalls).toBe(1);
      // Every tool turn that fits with the structured response's step after the answer (turns of 3 steps: the
      // model, the hook, the tools; then the model, the hook and generate_structured_response): none taken away.
      const ran = r.messages.filter((m) => m.getType() === "tool" && !String(m.content).startsWith("Not run"));
      expect(ran).toHaveLength(Math.floor((recursionLimit - 4) / 3));
    },
  );
});
