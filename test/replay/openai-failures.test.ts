/**
 * Issue 61, item 12e: an OpenAI chat-format log has no `status` on its tool results, so replay read every result as a
 * success and blocked the first retry of a call that had failed, which the live guard runs (a service that is down
 * may come back). Replay reads a failure from the content as the tool node writes it (`Error: …`), and its
 * decisions on the OpenAI form of a live run are the live guard's.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardedToolNode } from "../../src/index.js";
import { type ReplayRun, readRuns, replayGuards, runFromMessages } from "../../src/replay/index.js";
import { liveDecisions, replayedDecisions } from "../support/decisions.js";
import { buildEscalationAgent } from "../support/escalation.js";

/** The messages of a run as an OpenAI chat log has them: no status, no artifact, arguments as JSON text. */
function openAiLog(messages: BaseMessage[]): unknown[] {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return { role: "tool", tool_call_id: m.tool_call_id, content: String(m.content) };
    if (AIMessage.isInstance(m)) {
      const calls = (m.tool_calls ?? []).map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
      return { role: "assistant", content: String(m.content), ...(calls.length > 0 ? { tool_calls: calls } : {}) };
    }
    return { role: "user", content: String(m.content) };
  });
}

const getWeather = tool(
  async () => {
    throw new Error("weather service unavailable");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);
const call = { name: "get_weather", args: { city: "Paris" } };

describe("replay of an OpenAI chat log reads a failed tool result from its content", () => {
  it("the first retry after a failure runs, as it did live; the later repeats are blocked alike", async () => {
    const tools = new GuardedToolNode([getWeather]);
    const steps = [1, 2, 3, 4, 5, 6].map(() => ({ toolCalls: [call] }));
    const { agent, config } = buildEscalationAgent([...steps, "done"], { tools, interrupt: false });
    const out = await agent.invoke({ messages: [new HumanMessage("Weather in Paris?")] }, config);
    const live = liveDecisions(out.messages);
    expect(live.slice(0, 2).map((d) => d.action)).toEqual(["allow", "allow"]); // the retry ran

    const run = runFromMessages(openAiLog(out.messages), "openai");
    // The two calls that ran failed (the blocks' answers are the guard's, which replay decides again).
    expect(
      run.steps
        .filter((s) => s.role === "tool")
        .map((s) => s.ok)
        .slice(0, 2),
    ).toEqual([false, false]);
    const replay = replayGuards(run, { agentTools: ["get_weather"], hook: true });
    const ids = live.map((d) => d.id);
    const actions = (ds: { action: string; rule?: string | undefined }[]) => ds.map((d) => [d.action, d.rule]);
    expect(actions(replayedDecisions(replay.decisions, ids))).toEqual(actions(live));
  });

  it("a result that does not read as the tool node's error stays a success; an OpenAI log read from text alike", () => {
    const log = [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "Error: weather service unavailable\n Please fix your mistakes." },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      { role: "tool", tool_call_id: "c2", content: "Sunny. No errors reported: Error rate 0%." },
    ];
    const [run] = readRuns(JSON.stringify(log), { file: "chat.json" }).runs as [ReplayRun];
    expect(run.steps.filter((s) => s.role === "tool").map((s) => s.ok)).toEqual([false, true]);
    expect(replayGuards(run, { agentTools: ["get_weather"] }).decisions.map((d) => d.action)).toEqual([
      "allow",
      "allow",
    ]);
  });
});
