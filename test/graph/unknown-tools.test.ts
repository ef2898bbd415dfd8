/**
 * A model that keeps calling a tool the agent does not have (`read-file` for `read_file`), with other arguments each
 * time, under every adapter: createReactAgent (v1 and v2) with GuardedToolNode and the escalation hook, a custom
 * StateGraph with the escalation node, guardMiddleware in createAgent, and replay of each recorded run. Each call is
 * answered with one error ToolMessage that names the tool probably meant and the agent's tools (GuardedToolNode in
 * place of LangGraph's `Tool "read-file" not found.`, guardMiddleware in place of langchain's `… is not a valid tool,
 * try one of […]`); the answers do not depend on the arguments, so the same-error rule
 * (`escalation.sameErrorThreshold`, 5) stops the model: calls 1-5 run and fail, call 6 is blocked (`repeat_failure`,
 * strike 1), call 7 too (strike 2), call 8 reaches level 3, which asks a person (interrupts on, with a checkpointer)
 * or ends the run.
 */
import {
  type AIMessage,
  type BaseMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  ToolMessage,
} from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  escalationNode,
  GuardEscalationError,
  GuardedToolNode,
  GuardMessagesState,
  isEscalationInterrupt,
  type ToolGuardState,
} from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { replayGuards, runFromMessages } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { liveDecisions, replayedDecisions } from "../support/decisions.js";
import { validHistory } from "../support/escalation.js";

const readFile = tool(async ({ path }) => `content of ${path}`, {
  name: "read_file",
  description: "Read a file.",
  schema: z.object({ path: z.string() }),
});
const listFiles = tool(async () => "a.py\nb.py", {
  name: "list_files",
  description: "List the files.",
  schema: z.object({}),
});
const tools = () => [readFile, listFiles];
const NAMES = ["read_file", "list_files"];

/** The answer to a call of `read-file`, under every adapter: the tool probably meant, and the agent's tools. */
const ANSWER = "Error: read-file is not a valid tool. Did you mean read_file? Available tools: read_file, list_files.";

/** `read-file` with another path each time (call ids c1, c2, …), more times than the guards let it. */
const script = (): ScriptStep[] =>
  Array.from({ length: 12 }, (_, i) => ({
    content: "",
    toolCalls: [{ name: "read-file", args: { path: `f${i + 1}.py` }, id: `c${i + 1}` }],
  }));
const input = { messages: [new HumanMessage("Read the files.")] };
const config = () => ({ configurable: { thread_id: "unknown-tools" }, recursionLimit: 100 });

interface Run {
  messages: BaseMessage[];
  state: ToolGuardState;
  steps: number;
}

async function viaReactAgent(version: "v1" | "v2", interrupt = false): Promise<Run & { asked: unknown[] }> {
  const llm = new ScriptedChatModel(script());
  const node = new GuardedToolNode(tools());
  const agent = createReactAgent({
    llm,
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node, { interrupt }),
    checkpointer: new MemorySaver(),
    version,
  });
  const out = await agent.invoke(input, config());
  // What the run waits for a person with (level 3 with interrupts on).
  const asked = (await agent.getState(config())).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
  return { messages: out.messages, state: out.toolGuard as ToolGuardState, steps: llm.stepsTaken, asked };
}

async function viaCustomGraph(): Promise<Run> {
  const llm = new ScriptedChatModel(script());
  const node = new GuardedToolNode(tools());
  const graph = new StateGraph(GuardMessagesState)
    .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
    .addNode("escalation", escalationNode(node, { interrupt: false }), { ends: ["tools", "agent", END] })
    .addNode("tools", node)
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const out = await graph.invoke(input, config());
  return { messages: out.messages, state: out.toolGuard as ToolGuardState, steps: llm.stepsTaken };
}

async function viaMiddleware(learn: boolean, interrupt = false) {
  const llm = new ScriptedChatModel(script());
  const middleware = guardMiddleware({ interrupt, ...(learn ? {} : { agentTools: tools() }) });
  const agent = createAgent({ model: llm, tools: tools(), middleware: [middleware], checkpointer: new MemorySaver() });
  const out = await agent.invoke(input, config());
  const messages = out.messages as BaseMessage[];
  return { messages, state: out.toolGuard as ToolGuardState, steps: llm.stepsTaken, out };
}

/** Calls 1-5 answered with `answer`, 6 and 7 blocked (strikes 1 and 2), 8 stopped: the run ends there. */
function expectStoppedAtCall8(run: Run, answer: string) {
  const decided = liveDecisions(run.messages);
  expect(decided.map((d) => [d.id, d.action, d.rule, d.escalation])).toEqual([
    ["c1", "allow", undefined, undefined],
    ["c2", "allow", undefined, undefined],
    ["c3", "allow", undefined, undefined],
    ["c4", "allow", undefined, undefined],
    ["c5", "allow", undefined, undefined],
    ["c6", "block", "repeat_failure", 1],
    ["c7", "block", "repeat_failure", 2],
    ["c8", "stop", undefined, undefined],
  ]);
  const answers = run.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).slice(0, 5);
  for (const [i, m] of answers.entries()) {
    expect({ content: m.content, status: m.status, name: m.name, id: m.tool_call_id }).toEqual({
      content: answer,
      status: "error",
      name: "read-file",
      id: `c${i + 1}`,
    });
  }
  // The block names the error the tool keeps failing with.
  expect(decided[5]?.content).toMatch(/^Tool 'read-file' failed 5 times in a row with the same error/);
  expect(decided[5]?.content).toContain(answer.trimEnd());
  const final = run.messages.at(-1) as AIMessage;
  // The guards' explanation: the final message itself, or (createAgent's model wrap-up) in its metadata.
  const guard = final.response_metadata.guard as { message?: string } | undefined;
  expect(String(guard?.message ?? final.content)).toMatch(
    /^I stopped this run because I kept repeating one step: I called `read-file`/,
  );
  expect(run.steps).toBe(8);
  expect(run.state.escalation.strikes).toBe(3);
  expect(validHistory(run.messages)).toEqual([]);
}

/** Replay of the recorded run decides every call as the live run did. */
function expectReplayedAlike(run: Run) {
  const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(run.messages)));
  const replay = replayGuards(runFromMessages(stored, "unknown-tools"), { agentTools: NAMES, hook: true });
  const live = liveDecisions(run.messages);
  expect(
    replayedDecisions(
      replay.decisions,
      live.map((d) => d.id),
    ),
  ).toEqual(live);
  expect(replay.state.stats).toEqual(run.state.stats);
  expect(replay.state.escalation.strikes).toBe(3);
}

describe("a tool the agent does not have, called again and again with other arguments", () => {
  it("createReactAgent v1 and v2: answered by GuardedToolNode, stopped by the same-error rule at call 8", async () => {
    for (const version of ["v1", "v2"] as const) {
      const run = await viaReactAgent(version);
      expectStoppedAtCall8(run, ANSWER);
      expectReplayedAlike(run);
    }
  });

  it("a custom StateGraph with the escalation node: the same", async () => {
    const run = await viaCustomGraph();
    expectStoppedAtCall8(run, ANSWER);
    expectReplayedAlike(run);
  });

  it("guardMiddleware in createAgent (tools given or learned): answered alike, stopped at call 8", async () => {
    for (const learn of [false, true]) {
      const run = await viaMiddleware(learn);
      expectStoppedAtCall8(run, ANSWER);
      expectReplayedAlike(run);
    }
  });

  it("with the defaults (interrupts on, a checkpointer), call 8 asks a person instead", async () => {
    const react = await viaReactAgent("v1", true);
    expect(react.asked.filter(isEscalationInterrupt)).toMatchObject([{ level: 3, tool: "read-file", attempts: 3 }]);
    const mw = await viaMiddleware(false, true);
    expect((mw.out as { __interrupt__?: { value: unknown }[] }).__interrupt__?.map((i) => i.value)).toMatchObject([
      { level: 3, tool: "read-file", attempts: 3 },
    ]);
    expect([react.steps, mw.steps]).toEqual([8, 8]);
  });

  it("without the escalation hook, GuardedToolNode throws GuardEscalationError at call 8", async () => {
    const llm = new ScriptedChatModel(script());
    const node = new GuardedToolNode(tools());
    const agent = createReactAgent({ llm, tools: node, stateSchema: GuardMessagesState });
    await expect(agent.invoke(input, { recursionLimit: 100 })).rejects.toBeInstanceOf(GuardEscalationError);
    expect(llm.stepsTaken).toBe(8);
  });
});

describe("the answer to a call of a tool the agent does not have", () => {
  /** One response with near misses of `read_file`, a name close to nothing, and a real call; then a final answer. */
  const nearMisses = (): ScriptStep[] => [
    {
      content: "",
      toolCalls: [
        { name: "readFile", args: { path: "a.py" }, id: "m1" },
        { name: "READ_FILE", args: { path: "a.py" }, id: "m2" },
        { name: "read file", args: { path: "a.py" }, id: "m3" },
        { name: "raed_file", args: { path: "a.py" }, id: "m4" },
        { name: "fetch_url", args: { url: "x" }, id: "m5" },
        { name: "read_file", args: { path: "a.py" }, id: "m6" },
      ],
    },
    "Done.",
  ];
  const tail = "Available tools: read_file, list_files.";
  const expected = [
    ["m1", "readFile", "error", `Error: readFile is not a valid tool. Did you mean read_file? ${tail}`],
    ["m2", "READ_FILE", "error", `Error: READ_FILE is not a valid tool. Did you mean read_file? ${tail}`],
    ["m3", "read file", "error", `Error: read file is not a valid tool. Did you mean read_file? ${tail}`],
    ["m4", "raed_file", "error", `Error: raed_file is not a valid tool. Did you mean read_file? ${tail}`],
    ["m5", "fetch_url", "error", `Error: fetch_url is not a valid tool. ${tail}`],
    ["m6", "read_file", "success", "content of a.py"],
  ];
  const answers = (messages: BaseMessage[]) =>
    messages
      .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
      .map((m) => [m.tool_call_id, m.name, m.status, m.content]);

  it("names the tool probably meant, under GuardedToolNode and guardMiddleware alike; a real tool runs as before", async () => {
    const node = new GuardedToolNode(tools());
    const react = createReactAgent({
      llm: new ScriptedChatModel(nearMisses()),
      tools: node,
      stateSchema: GuardMessagesState,
    });
    expect(answers((await react.invoke(input)).messages)).toEqual(expected);
    const agent = createAgent({
      model: new ScriptedChatModel(nearMisses()),
      tools: tools(),
      middleware: [guardMiddleware()],
    });
    expect(answers((await agent.invoke(input)).messages as BaseMessage[])).toEqual(expected);
  });

  it("with handleToolErrors false, GuardedToolNode throws ToolNode's error, as before", async () => {
    const node = new GuardedToolNode(tools(), { handleToolErrors: false });
    const react = createReactAgent({
      llm: new ScriptedChatModel(script()),
      tools: node,
      stateSchema: GuardMessagesState,
    });
    await expect(react.invoke(input)).rejects.toThrow('Tool "read-file" not found.');
  });
});
