/**
 * One turn procedure under every adapter: the same scripted conversation through createReactAgent (v1 and v2) with
 * the escalation hook, a custom StateGraph with the escalation node, and replay of the recorded messages gives the
 * same decision for every call and the same guard counters.
 */
import { type BaseMessage, HumanMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationNode, GuardedToolNode, GuardMessagesState, type ToolGuardState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { replayGuards, runFromMessages } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../../src/testing/index.js";
import { liveDecisions, replayedDecisions } from "../support/decisions.js";
import { buildEscalationAgent, escalationTools, validHistory } from "../support/escalation.js";

const getStatus = tool(async () => "status: green", {
  name: "get_settings",
  description: "Read the build status.",
  schema: z.object({}),
});
const getLog = tool(async () => "log: 3 lines", {
  name: "get_log",
  description: "Read the log.",
  schema: z.object({}),
});
const allTools = () => [...escalationTools(), getStatus, getLog];
const toolsOf = () => new GuardedToolNode(allTools(), { escalation: { sameErrorThreshold: 3 } });

let ids = 0;
const call = (name: string, args: Record<string, unknown> = {}): ScriptedToolCall => ({ name, args, id: `c${++ids}` });
const write = (content: string) => call("write_file", { path: "game.py", content });
const update = (n: number) => call("update_record", { id: "r1", fields: { status: `s${n}` } });

/** Every kind of decision: new, consecutive, redundant, parallel siblings, a reminder, progress, repeated errors, the end. */
function script(): ScriptStep[] {
  ids = 0;
  return [
    { content: "Status first.", toolCalls: [call("get_settings")] },
    { content: "", toolCalls: [call("get_settings")] }, // consecutive
    { content: "Instead, I'll check the log.", toolCalls: [call("get_log")] }, // progress
    { content: "", toolCalls: [call("get_settings")] }, // redundant: the status read is still valid
    { content: "I'll write the game instead.", toolCalls: [write("import pygame\n")] }, // runs, fails
    { content: "Let me write it again.", toolCalls: [write("import pygame\n")] }, // consecutive
    { content: "Once more.", toolCalls: [write("import pygame \n")] }, // a near-repeat: a reminder
    { content: "Instead, I will use tkinter.", toolCalls: [write("import tkinter\n")] }, // progress
    { content: "", toolCalls: [call("run", { cmd: "pip list" }), call("get_settings")] }, // a change, then a read
    { content: "", toolCalls: [call("get_settings"), call("get_settings")] }, // parallel identical reads
    { content: "", toolCalls: [update(1)] },
    { content: "", toolCalls: [update(2), update(22)] },
    { content: "", toolCalls: [update(3)] },
    { content: "", toolCalls: [update(4)] }, // repeat_failure: strike 1
    { content: "", toolCalls: [update(5)] }, // strike 2
    { content: "", toolCalls: [update(6)] }, // strike 3: the run ends (no interrupts)
    "never reached",
  ];
}

const input = { messages: [new HumanMessage("Check the status, write the game, then update r1.")] };

async function viaReactAgent(version: "v1" | "v2") {
  const { agent, config } = buildEscalationAgent(script(), { interrupt: false, tools: toolsOf(), version });
  const out = await agent.invoke(input, config);
  return { messages: out.messages as BaseMessage[], state: out.toolGuard as ToolGuardState };
}

async function viaMiddleware() {
  const agent = createAgent({
    model: new ScriptedChatModel(script()),
    tools: allTools(),
    middleware: [
      guardMiddleware({
        escalation: { sameErrorThreshold: 3 },
        interrupt: false,
        agentTools: allTools(),
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(input, { configurable: { thread_id: "parity" }, recursionLimit: 100 });
  return { messages: out.messages as BaseMessage[], state: out.toolGuard as ToolGuardState };
}

async function viaCustomGraph() {
  const llm = new ScriptedChatModel(script());
  const tools = toolsOf();
  const graph = new StateGraph(GuardMessagesState)
    .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
    .addNode("escalation", escalationNode(tools, { interrupt: false }), { ends: ["tools", "agent", END] })
    .addNode("tools", tools)
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const out = await graph.invoke(input, { configurable: { thread_id: "parity" }, recursionLimit: 100 });
  return { messages: out.messages as BaseMessage[], state: out.toolGuard as ToolGuardState };
}

describe("one turn procedure under every adapter", () => {
  it("createReactAgent v1 and v2, a custom graph, createAgent middleware and replay decide every call alike", async () => {
    const v1 = await viaReactAgent("v1");
    const expected = liveDecisions(v1.messages);
    // The script exercises every kind of decision.
    expect(new Set(expected.map((d) => d.action))).toEqual(new Set(["allow", "block", "stop"]));
    expect(new Set(expected.map((d) => d.rule).filter(Boolean))).toEqual(
      new Set(["consecutive", "redundant", "near_duplicate", "repeat_failure"]),
    );
    expect(validHistory(v1.messages)).toEqual([]);

    for (const other of [await viaReactAgent("v2"), await viaCustomGraph(), await viaMiddleware()]) {
      expect(liveDecisions(other.messages)).toEqual(expected);
      expect(other.state.stats).toEqual(v1.state.stats);
      expect(other.state.escalation.strikes).toBe(v1.state.escalation.strikes);
      expect(validHistory(other.messages)).toEqual([]);
    }

    const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(v1.messages)));
    const tools = allTools().map((t) => t.name);
    const replay = replayGuards(runFromMessages(stored, "parity"), {
      agentTools: tools,
      escalation: { sameErrorThreshold: 3 },
    });
    const replayed = replayedDecisions(
      replay.decisions,
      expected.map((d) => d.id),
    );
    // Replay answers a stopped call with the same "Not run" text the hook gives it.
    expect(replayed).toEqual(expected);
    expect(replay.state.stats).toEqual(v1.state.stats);
    expect(replay.state.escalation.strikes).toBe(v1.state.escalation.strikes);
  });
});
