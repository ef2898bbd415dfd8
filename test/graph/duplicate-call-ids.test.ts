/**
 * Issue 35, item 12: a response whose calls share an id, or have an empty one. Each call is decided as itself and
 * gets exactly one answer, in the order of the calls (the n-th answer with an id answers the n-th call with it), its
 * `tool_call_id` the model's own; the stats count what ran and what was blocked. Through createReactAgent
 * (GuardedToolNode, v1 and v2), createAgent (guardMiddleware) and replayGuards.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  type GuardArtifact,
  GuardedToolNode,
  GuardMessagesState,
  type ServedArtifact,
  type ToolGuardState,
} from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayStep, replayGuards } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";

const read = (path: string, id: string): ScriptedToolCall => ({ name: "read_file", args: { path }, id });

interface Case {
  name: string;
  script: ScriptedToolCall[][];
  /** Per call of the script, in order: "ran", "blocked", or "same id" (answered by the earlier call's answer). */
  outcomes: string[];
  /** The paths read, in order. */
  ran: string[];
}

const cases: Case[] = [
  {
    name: "a repeat, then a new call, under one id",
    script: [[read("a", "c1")], [read("a", "x"), read("b", "x")]],
    outcomes: ["ran", "blocked", "ran"],
    ran: ["a", "b"],
  },
  {
    name: "a new call, then a repeat, under one id",
    script: [[read("a", "c1")], [read("b", "x"), read("a", "x")]],
    outcomes: ["ran", "ran", "blocked"],
    ran: ["a", "b"],
  },
  {
    name: "empty ids",
    script: [[read("a", ""), read("a", ""), read("b", "")]],
    outcomes: ["ran", "blocked", "ran"],
    ran: ["a", "b"],
  },
  {
    // Issue 63: a provider runs a call id once (Qwen Code #5014), so the 2nd is answered by the 1st's answer.
    name: "two identical calls, one id",
    script: [[read("a", "x"), read("a", "x")]],
    outcomes: ["ran", "same id"],
    ran: ["a"],
  },
];

type Adapter = "createReactAgent v1" | "createReactAgent v2" | "createAgent";
const ADAPTERS: Adapter[] = ["createReactAgent v1", "createReactAgent v2", "createAgent"];

/** Per call of the AI messages, in order: the n-th ToolMessage with its id after the message answers the n-th call. */
function answersOf(messages: BaseMessage[]): { outcomes: string[]; ids: string[] } {
  const outcomes: string[] = [];
  const ids: string[] = [];
  messages.forEach((m, at) => {
    if (!AIMessage.isInstance(m)) return;
    const later = messages.slice(at + 1).filter((t): t is ToolMessage => ToolMessage.isInstance(t));
    const used = new Set<ToolMessage>();
    for (const call of m.tool_calls ?? []) {
      const answer = later.find((t) => !used.has(t) && t.tool_call_id === (call.id ?? ""));
      if (answer === undefined) {
        outcomes.push("none");
        continue;
      }
      used.add(answer);
      ids.push(answer.tool_call_id);
      const guard = (answer.artifact as { guard?: GuardArtifact | ServedArtifact } | undefined)?.guard;
      outcomes.push(guard === undefined ? "ran" : "blocked" in guard ? "blocked" : guard.sameId ? "same id" : "ran");
    }
    const answered = later.filter((t) => (m.tool_calls ?? []).some((c) => (c.id ?? "") === t.tool_call_id));
    expect(answered.length).toBe(m.tool_calls?.length ?? 0); // exactly one answer per call
  });
  return { outcomes, ids };
}

async function runLive(adapter: Adapter, script: ScriptedToolCall[][]) {
  const ran: string[] = [];
  const readFile = tool(
    async ({ path }: { path: string }) => {
      ran.push(path);
      return `content of ${path}`;
    },
    { name: "read_file", description: "Reads a file.", schema: z.object({ path: z.string() }) },
  );
  const llm = new ScriptedChatModel([...script.map((toolCalls) => ({ toolCalls })), "Finished."]);
  const config = { configurable: { thread_id: "t" }, recursionLimit: 50 };
  const input = { messages: [{ role: "user", content: "Go." }] };
  let result: { messages: BaseMessage[]; toolGuard: ToolGuardState };
  if (adapter === "createAgent") {
    const agent = createAgent({
      model: llm,
      tools: [readFile],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    });
    result = (await agent.invoke(input, config)) as typeof result;
  } else {
    const node = new GuardedToolNode([readFile]);
    const agent = createReactAgent({
      llm,
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(node),
      checkpointer: new MemorySaver(),
      version: adapter === "createReactAgent v2" ? "v2" : "v1",
    });
    result = (await agent.invoke(input, config)) as typeof result;
  }
  return { ran, ...answersOf(result.messages), stats: result.toolGuard.stats };
}

const blockedCount = (stats: ToolGuardState["stats"]) => Object.values(stats.blocked).reduce((a, b) => a + b, 0);

describe("duplicate and empty tool call ids", () => {
  for (const c of cases) {
    it.each(ADAPTERS)(`${c.name}: %s decides each call as itself`, async (adapter) => {
      const { ran, outcomes, ids, stats } = await runLive(adapter, c.script);
      expect(outcomes).toEqual(c.outcomes);
      expect(ran).toEqual(c.ran);
      // The answers keep the model's ids: a call's answer pairs with the AI message the model sent.
      expect(ids).toEqual(c.script.flat().map((call) => call.id));
      // The stats agree with what ran and what was blocked.
      expect(stats.allowed).toBe(ran.length);
      expect(blockedCount(stats)).toBe(outcomes.filter((o) => o === "blocked").length);
    });

    it(`${c.name}: replayGuards decides as the live adapters`, () => {
      const steps: ReplayStep[] = [{ role: "user", text: "Go." }];
      for (const response of c.script) {
        steps.push({ role: "assistant", text: "", tool_calls: response.map((r) => ({ ...r })) });
        for (const r of response) {
          const text = `content of ${String(r.args.path)}`;
          steps.push({ role: "tool", name: r.name, ok: true, text, tool_call_id: r.id });
        }
      }
      const { decisions, state } = replayGuards({ id: "dup", steps });
      const outcome = (action: string) => (action === "allow" ? "ran" : action === "cache" ? "same id" : "blocked");
      expect(decisions.map((d) => outcome(d.action))).toEqual(c.outcomes);
      expect(state.stats.allowed).toBe(c.ran.length);
      // Each allowed call answered with its own recorded result.
      const allowed = decisions.filter((d) => d.action === "allow").map((d) => d.content);
      expect(allowed).toEqual(c.ran.map((p) => `content of ${p}`));
    });
  }
});
