/**
 * Issue 47: the guards under `@langchain/langgraph-swarm`, each agent a createAgent with `loopDetectMiddleware`.
 * A swarm hands control over with `Command.PARENT`, which drops the agent's own state at each hand-off: the guards
 * read the hand-offs from the conversation every agent sees, and the task's budget from the invocation's config.
 * Two agents passing the task back and forth stop within 4 hand-offs, in words; three agents that share a
 * 20-iteration budget stop at 20 together; agents that make progress between hand-offs are not stopped.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { guardVerdict } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";
import { countingTool, finalWords } from "./support.js";

type Tool = ReturnType<typeof countingTool>["tool"];

/** One agent of the swarm: a createAgent with the guards. */
function agent(name: string, tools: Tool[], respond: StepResponder) {
  return createAgent({
    name,
    model: new ScriptedChatModel(respond),
    tools,
    middleware: [guardMiddleware(), loopDetectMiddleware()],
  }).graph;
}

/** A swarm of createAgent agents (each handing off to `next(name)`), compiled with a checkpointer. */
function swarm(
  names: string[],
  next: (name: string) => string,
  tools: Tool[],
  respond: (name: string) => StepResponder,
) {
  const agents = names.map((name) =>
    agent(name, [...tools, createHandoffTool({ agentName: next(name) }) as unknown as Tool], respond(name)),
  );
  return createSwarm({ agents: agents as never, defaultActiveAgent: names[0] as string }).compile({
    checkpointer: new MemorySaver(),
  });
}

async function invoke(graph: ReturnType<typeof swarm>, thread: string, configurable: Record<string, unknown> = {}) {
  return (await graph.invoke(
    { messages: [{ role: "user", content: "Plan the trip." }] },
    { configurable: { thread_id: thread, ...configurable }, recursionLimit: 300 },
  )) as { messages: BaseMessage[] };
}

/** The hand-offs made (answered "Successfully transferred"), not those the guards stopped. */
const handoffs = (messages: readonly BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && String(m.content).startsWith("Successfully transferred"));

/** Tool turns taken: AI messages with tool calls whose calls ran (not answered "Not run"). */
const toolTurns = (messages: readonly BaseMessage[]) =>
  messages.filter(
    (m) =>
      AIMessage.isInstance(m) &&
      (m.tool_calls ?? []).length > 0 &&
      messages.some(
        (r) =>
          ToolMessage.isInstance(r) &&
          r.tool_call_id === m.tool_calls?.[0]?.id &&
          !String(r.content).startsWith("Not run"),
      ),
  ).length;

describe("a swarm", () => {
  it("two agents handing the task back and forth stop within 4 hand-offs, in words", async () => {
    const other = (name: string) => (name === "alice" ? "bob" : "alice");
    const graph = swarm(["alice", "bob"], other, [], (name) => () => ({
      toolCalls: [{ name: `transfer_to_${other(name)}`, args: {} }],
    }));
    const result = await invoke(graph, "swarm-ping-pong");
    expect(handoffs(result.messages)).toHaveLength(3); // the 4th hand-off in a row without progress is not made
    expect(guardVerdict(result)).toMatchObject({ guard: "loop", rule: "handoffs", value: 4, limit: 4 });
    expect(finalWords(result.messages)).toBeDefined();
  });

  it("three agents sharing a 20-iteration task budget stop at 20 together, in words", async () => {
    const work = countingTool("work", (a) => `result of ${a.q}`);
    const names = ["alice", "bob", "carol"];
    const next = (name: string) => names[(names.indexOf(name) + 1) % 3] as string;
    // Each agent does one piece of new work, then hands on: progress between every hand-off, forever.
    const graph = swarm(names, next, [work.tool], (name) => (messages) => {
      const last = messages.at(-1);
      if (ToolMessage.isInstance(last) && last.name === "work")
        return { toolCalls: [{ name: `transfer_to_${next(name)}`, args: {} }] };
      return { toolCalls: [{ name: "work", args: { q: `piece ${work.runs.length + 1} by ${name}` } }] };
    });
    const result = await invoke(graph, "swarm-budget", { taskBudget: { maxIterations: 20 } });
    expect(toolTurns(result.messages)).toBe(20);
    expect(work.runs).toHaveLength(10);
    expect(guardVerdict(result)).toMatchObject({
      guard: "limits",
      rule: "iterations",
      value: 20,
      limit: 20,
      task: true,
    });
    expect(finalWords(result.messages)).toBeDefined();
  });

  it("harm: agents that hand off after new work each time are not stopped as a ping-pong", async () => {
    const work = countingTool("work", (a) => `result of ${a.q}`);
    const other = (name: string) => (name === "alice" ? "bob" : "alice");
    const graph = swarm(["alice", "bob"], other, [work.tool], (name) => (messages) => {
      const last = messages.at(-1);
      if (work.runs.length >= 8) return "The trip is planned.";
      if (ToolMessage.isInstance(last) && last.name === "work")
        return { toolCalls: [{ name: `transfer_to_${other(name)}`, args: {} }] };
      return { toolCalls: [{ name: "work", args: { q: `leg ${work.runs.length + 1}` } }] };
    });
    const result = await invoke(graph, "swarm-progress");
    expect(work.runs).toHaveLength(8);
    expect(handoffs(result.messages)).toHaveLength(7);
    expect(guardVerdict(result)).toBeUndefined();
    expect(finalWords(result.messages)).toBe("The trip is planned.");
  });
});
