/**
 * Issue 42: never a turn taken away, never GraphRecursionError. Over recursionLimit 5-40, every stack of item 4 and
 * tasks of 0-8 tool turns (and a model that never stops), a guarded agent makes exactly the tool turns that fit the
 * budget of its stack (src/run-end/budget.ts): it finishes every task whose turns fit, with the model's own answer,
 * and otherwise makes every tool turn that fits and ends in words. The same stack without the guards checks the
 * arithmetic against LangGraph: it finishes a task exactly when the arithmetic says it fits.
 *
 * The budget is linear in the turns with a period of `around + 2` steps (at most 6 here), so limits 5-40 take every
 * stack through every remainder of that period at least five times, and tasks of 0-8 turns give every stack, within
 * those limits, tasks that fit and tasks that do not (on the largest stack, { around: 4, edges: 2 }, 6 turns need 44).
 * Each property also runs, every time, the cases a uniform draw seldom meets: a limit below the stack's own answer,
 * the exact limit of a task and one step short of it, and a model that never stops (`edgeCases`).
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { END, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import fc from "fast-check";
import { modelCallLimitMiddleware, toolCallLimitMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import {
  escalationHook,
  escalationNode,
  GuardedToolNode,
  GuardMessagesState,
  guardHooks,
  guardVerdict,
  loopDetectHook,
  loopDetectNode,
  type StackShape,
  smallestRecursionLimit,
} from "../../src/index.js";
import {
  guardMiddleware,
  guardStack,
  loopDetectMiddleware,
  safetyLimitsMiddleware,
  stackShape,
} from "../../src/middleware/index.js";
import { toolTurnsThatFit } from "../../src/run-end/budget.js";
import { validHistory } from "../support/escalation.js";
import { ANSWER, agentWith, doneSteps, taskModel, text, userHook, work } from "./agents.js";

/** What the tests run: an agent's `invoke`. */
interface Runnable {
  invoke(input: never, config: never): Promise<{ messages: BaseMessage[] }>;
}

/** A stack: the agent with the guards and without them, and the shape of each. */
interface Stack {
  guarded: (turns: number) => Runnable;
  plain: (turns: number) => Runnable;
  shape: StackShape;
  plainShape: StackShape;
}

const loop = () => loopDetectMiddleware({ turns: { outputOf: text } });
const limit = (toolName?: string) => toolCallLimitMiddleware({ runLimit: 1000, ...(toolName ? { toolName } : {}) });

/**
 * One agent per task length, built on first use and invoked again by later runs (no checkpointer: every invocation
 * starts from a fresh state, as an agent built once and invoked many times does).
 */
function perTask(build: (turns: number) => Runnable): (turns: number) => Runnable {
  const agents = new Map<number, Runnable>();
  return (turns) => {
    let agent = agents.get(turns);
    if (agent === undefined) {
      agent = build(turns);
      agents.set(turns, agent);
    }
    return agent;
  };
}

/** A createAgent stack: the guards' middleware and the others (`declare`: passed through guardStack). */
function createAgentStack(ours: () => unknown[], others: () => unknown[], shape: StackShape, plainShape: StackShape) {
  return (declare: boolean): Stack => ({
    guarded: perTask((turns) =>
      agentWith(turns, declare ? guardStack([...ours(), ...others()] as object[]) : [...ours(), ...others()]),
    ),
    plain: perTask((turns) => agentWith(turns, others())),
    shape,
    plainShape,
  });
}

function reactStack(hook: (tools: GuardedToolNode) => never): Stack {
  return {
    guarded: perTask((turns) => {
      const tools = new GuardedToolNode([work]);
      return createReactAgent({
        llm: taskModel(turns),
        tools,
        stateSchema: GuardMessagesState,
        postModelHook: hook(tools),
      });
    }),
    plain: perTask((turns) => createReactAgent({ llm: taskModel(turns), tools: new ToolNode([work]) })),
    shape: { around: 1, edges: 0 },
    plainShape: { around: 0, edges: 0 },
  };
}

/** The custom graph of examples/custom-graph.ts: the model, a guard node after it, the tools. */
function customGraphStack(guard: "escalation" | "loop"): Stack {
  const graph = (turns: number, guarded: boolean) => {
    const model = taskModel(turns);
    const tools = guarded ? new GuardedToolNode([work]) : new ToolNode([work]);
    const agent = async (state: { messages: BaseMessage[] }) => ({ messages: [await model.invoke(state.messages)] });
    const base = new StateGraph(GuardMessagesState).addNode("agent", agent).addNode("tools", tools);
    if (!guarded)
      return base
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile();
    const node =
      guard === "escalation" ? escalationNode(tools as GuardedToolNode) : loopDetectNode({ turns: { outputOf: text } });
    return base
      .addNode("guard", node, { ends: ["tools", "agent", END] })
      .addEdge(START, "agent")
      .addEdge("agent", "guard")
      .addEdge("tools", "agent")
      .compile();
  };
  return {
    guarded: perTask((turns) => graph(turns, true) as never),
    plain: perTask((turns) => graph(turns, false) as never),
    shape: { around: 1, edges: 0 },
    plainShape: { around: 0, edges: 0 },
  };
}

const none: StackShape = { around: 0, edges: 0 };
const STACKS: Record<string, Stack> = {
  guardMiddleware: createAgentStack(
    () => [guardMiddleware()],
    () => [],
    { around: 1, edges: 0 },
    none,
  )(false),
  "guardMiddleware({ agentTools })": createAgentStack(
    () => [guardMiddleware({ agentTools: [work] })],
    () => [],
    { around: 1, edges: 0 },
    none,
  )(false),
  loopDetectMiddleware: createAgentStack(
    () => [loop()],
    () => [],
    none,
    none,
  )(false),
  safetyLimitsMiddleware: createAgentStack(
    () => [safetyLimitsMiddleware({ maxIterations: 1000 })],
    () => [],
    none,
    none,
  )(false),
  "guard + loop": createAgentStack(
    () => [guardMiddleware(), loop()],
    () => [],
    { around: 1, edges: 0 },
    none,
  )(false),
  "guard + loop + toolCallLimit (the documented stack)": createAgentStack(
    () => [guardMiddleware(), loop()],
    () => [limit()],
    { around: 2, edges: 1 },
    { around: 1, edges: 1 },
  )(false),
  "guard({ agentTools }) + loop + toolCallLimit + modelCallLimit": createAgentStack(
    () => [guardMiddleware({ agentTools: [work] }), loop()],
    () => [limit(), modelCallLimitMiddleware({ runLimit: 1000 })],
    { around: 4, edges: 2 },
    { around: 3, edges: 2 },
  )(false),
  "safetyLimits + toolCallLimit twice (guardStack)": createAgentStack(
    () => [safetyLimitsMiddleware({ maxIterations: 1000 })],
    () => [limit(), limit("work")],
    { around: 2, edges: 2 },
    { around: 2, edges: 2 },
  )(true),
  "guard + loop + the user's beforeAgent, afterAgent, beforeModel hooks (guardStack)": createAgentStack(
    () => [guardMiddleware(), loop()],
    () => [userHook("Audit", "beforeAgent"), userHook("Report", "afterAgent"), userHook("Trim", "beforeModel")],
    { around: 2, edges: 2 },
    { around: 1, edges: 2 },
  )(true),
  "guard + the user's afterModel hook and toolCallLimit (guardStack)": createAgentStack(
    () => [guardMiddleware({ agentTools: [work] })],
    () => [userHook("Check", "afterModel"), limit()],
    { around: 3, edges: 1 },
    { around: 2, edges: 1 },
  )(true),
  "createReactAgent + escalationHook": reactStack((tools) => escalationHook(tools) as never),
  "createReactAgent + loopDetectHook": reactStack(() => loopDetectHook({ turns: { outputOf: text } }) as never),
  "createReactAgent + guardHooks(loopDetectHook, escalationHook)": reactStack(
    (tools) => guardHooks(loopDetectHook({ turns: { outputOf: text } }), escalationHook(tools)) as never,
  ),
  "custom StateGraph + escalationNode": customGraphStack("escalation"),
  "custom StateGraph + loopDetectNode": customGraphStack("loop"),
};

const input = { messages: [{ role: "user", content: "Do all the steps." }] };

async function outcome(run: Promise<{ messages: BaseMessage[] }>) {
  return run.then(
    (out) => ({ messages: out.messages, error: undefined }),
    (error: Error) => ({ messages: [] as BaseMessage[], error }),
  );
}

/** Checks one stack at one limit with one task (Infinity: a model that never stops). */
async function check(stack: Stack, limit: number, turns: number): Promise<void> {
  const config = { recursionLimit: limit };
  if (Number.isFinite(turns)) {
    const plain = await outcome(stack.plain(turns).invoke(input as never, config as never));
    const fits = limit >= smallestRecursionLimit(turns, stack.plainShape);
    expect(plain.error === undefined, `the plain agent at ${limit}, ${turns} turns`).toBe(fits);
  }
  const guarded = await outcome(stack.guarded(turns).invoke(input as never, config as never));
  if (limit < smallestRecursionLimit(0, stack.shape)) return; // not even an answer fits the stack's own hooks
  expect(guarded.error, `GraphRecursionError at ${limit}, ${turns} turns`).toBeUndefined();
  const messages = guarded.messages;
  const final = messages.at(-1) as AIMessage;
  expect(final.getType()).toBe("ai");
  expect(final.tool_calls ?? []).toEqual([]);
  expect(validHistory(messages)).toEqual([]);
  if (limit >= smallestRecursionLimit(turns, stack.shape)) {
    expect(doneSteps(messages), `tool turns at ${limit}`).toBe(turns);
    expect(text(final)).toMatch(ANSWER); // the model's own answer
    expect(guardVerdict({ messages })).toBeUndefined();
  } else {
    expect(doneSteps(messages), `tool turns at ${limit}, ${turns} asked`).toBe(toolTurnsThatFit(limit, stack.shape));
    expect(guardVerdict({ messages })).toMatchObject({ guard: "steps", rule: "recursionLimit", limit });
  }
}

/** The largest limit and task the properties draw (see the header for why they are enough). */
const MAX_LIMIT = 40;
const MAX_TURNS = 8;
const turnsArb = fc.oneof(fc.integer({ min: 0, max: MAX_TURNS }), fc.constant(Number.POSITIVE_INFINITY));

/**
 * The cases a uniform draw seldom meets, run first for every stack: a limit one step below the stack's own answer
 * (when one is in range), a task of 3 turns at its exact limit and one step short of it, and a model that never
 * stops at the limit of 2 turns plus one step (a remainder other than the exact fit).
 */
function edgeCases(shape: StackShape, smallest = 5): [number, number][] {
  const exact = smallestRecursionLimit(3, shape);
  const cases: [number, number][] = [
    [exact, 3],
    [exact - 1, 3],
    [smallestRecursionLimit(2, shape) + 1, Number.POSITIVE_INFINITY],
  ];
  const none = smallestRecursionLimit(0, shape) - 1;
  if (none >= smallest) cases.push([none, 4]);
  return cases.filter(([limit]) => limit >= smallest && limit <= MAX_LIMIT);
}

/**
 * 12 drawn runs per stack on top of its edge cases: what differs between stacks is their shape, which every run
 * checks whole (the turns made against the arithmetic of that shape); the draws add interior points of the range.
 */
const RUNS_PER_STACK = 12;

/** fast-check counts `examples` within `numRuns`: the edge cases first, then 12 draws. */
function withEdges(examples: [number, number][]) {
  return { examples, numRuns: examples.length + RUNS_PER_STACK };
}

describe("the guards make exactly the tool turns that fit, on every stack", () => {
  for (const [name, stack] of Object.entries(STACKS)) {
    it(`${name}: recursionLimit 5-${MAX_LIMIT} x tasks of 0-${MAX_TURNS} tool turns and endless`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 5, max: MAX_LIMIT }), turnsArb, async (limit, turns) =>
          check(stack, limit, turns),
        ),
        withEdges(edgeCases(stack.shape)),
      );
    }, 120_000);
  }

  it("without guardStack, hooks the guards cannot name are measured at the second model call: exact from the first tool turn that fits", async () => {
    // toolCallLimitMiddleware twice (known by its channel, counted once until its counts name both tools) and a
    // beforeModel hook of the user's: the first decision counts on fewer hooks, so only a limit where no tool turn
    // fits may overrun; from the limit of one tool turn up, every task gets exactly the turns that fit.
    const stacks = [
      createAgentStack(
        () => [guardMiddleware()],
        () => [limit(), limit("work")],
        { around: 3, edges: 2 },
        { around: 2, edges: 2 },
      )(false),
      createAgentStack(
        () => [guardMiddleware(), loop()],
        () => [userHook("Trim", "beforeModel")],
        { around: 2, edges: 0 },
        { around: 1, edges: 0 },
      )(false),
    ];
    for (const stack of stacks) {
      const from = smallestRecursionLimit(1, stack.shape);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: from, max: MAX_LIMIT }), turnsArb, async (limit, turns) =>
          check(stack, limit, turns),
        ),
        withEdges([[from, 1], ...edgeCases(stack.shape, from)]),
      );
    }
  }, 120_000);

  it("the edges of the budget, on the documented stack: a task of exactly the turns that fit ends in the model's answer", async () => {
    const stack = STACKS["guard + loop + toolCallLimit (the documented stack)"] as Stack;
    for (const turns of [0, 1, 2, 5, 8]) {
      const limit = smallestRecursionLimit(turns, stack.shape);
      await check(stack, limit, turns); // fits exactly: the answer
      await check(stack, limit - 1, turns); // one step short: every turn that fits, then words
    }
    expect(smallestRecursionLimit(5, stack.shape)).toBe(25); // 5 tool turns at LangGraph's default
    // stackShape counts a middleware list's hooks as guardStack does: the limit a stack needs, before running it.
    expect(stackShape([guardMiddleware(), loop(), limit()])).toEqual(stack.shape);
    expect(stackShape([guardMiddleware(), userHook("A", "beforeAgent"), userHook("B", "afterAgent")])).toEqual({
      around: 1,
      edges: 2,
    });
  });
});
