/**
 * Issue 61, item 4: a sub-agent stop that the tool handled leaves the tool's answer as it is. A tool that sees its
 * sub-agent was stopped and falls back to another agent answers with the other agent's words: that answer stands,
 * through `GuardedToolNode` and `guardMiddleware`, and two levels down through an unguarded agent that handled the
 * stop in its own words. Where the stopped run's final words reach the tool's answer (as they are, or inside it), the
 * answer is still the report of the stopped sub-agent.
 */
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  GuardMessagesState,
  guardVerdict,
  type ToolGuardState,
} from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";
import { answersOf, countingTool, finalWords } from "./support.js";

type Tool = ReturnType<typeof countingTool>["tool"];
type Result = { messages: BaseMessage[]; toolGuard: ToolGuardState };

/** A createReactAgent with `GuardedToolNode` and the escalation hook (level 3 ends the run). */
function guardedAgent(tools: Tool[], respond: StepResponder) {
  const node = new GuardedToolNode(tools);
  return createReactAgent({
    llm: new ScriptedChatModel(respond),
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node, { interrupt: false }),
  });
}

/** A sub-agent stuck on one search: its guards stop it (escalation, the canned final message). */
const stuckSearcher = (search: Tool) =>
  guardedAgent([search], () => ({ toolCalls: [{ name: "search_code", args: { q: "TODO" } }] }));

/** A sub-agent that reads the README once and answers. */
const readmeReader = (read: Tool) =>
  guardedAgent([read], (messages) =>
    ToolMessage.isInstance(messages.at(-1))
      ? "The TODOs are listed in README.md: 3 of them."
      : {
          toolCalls: [{ name: "read_readme", args: { q: "TODO" } }],
        },
  );

/** An agent as a tool invokes it (a method: its config's type is the agent's own). */
interface Agent {
  invoke(input: { messages: BaseMessage[] }, config?: unknown): Promise<{ messages: BaseMessage[] }>;
}

/** A tool that asks `agent`, and when the guards stopped it, asks `fallback` (if any) instead. */
function askTool(name: string, agent: Agent, fallback?: Agent, said = (words: string) => words): Tool {
  return tool(
    async ({ q }, config) => {
      const first = await agent.invoke({ messages: [new HumanMessage(q)] }, config);
      const result =
        fallback !== undefined && guardVerdict(first) !== undefined
          ? await fallback.invoke({ messages: [new HumanMessage(q)] }, config)
          : first;
      return said(String(result.messages.at(-1)?.content));
    },
    { name, description: `${name}: asks an agent`, schema: z.object({ q: z.string() }) },
  ) as unknown as Tool;
}

/** The parent's model: one call of `name`, then a report of its answer. */
const asking =
  (name: string): StepResponder =>
  (messages) => {
    const last = messages.at(-1);
    if (ToolMessage.isInstance(last)) return `Report: ${String(last.content).slice(0, 60)}`;
    return { toolCalls: [{ name, args: { q: "Where are the TODOs?" } }] };
  };

const question = { messages: [new HumanMessage("Find the TODOs.")] };

/** The parent's answer to its one call of `name`, and what its guards recorded for it. */
function answerOf(result: Result, name: string) {
  const [answer] = answersOf(result.messages, name);
  const recorded = result.toolGuard.repetition.window.find((r) => r.tool === name)?.result?.ok;
  return { answer, recorded };
}

describe("a sub-agent stop the tool handled", () => {
  it("GuardedToolNode: the tool fell back to another agent: its answer stands", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const read = countingTool("read_readme", () => "TODO: a, b, c");
    const ask = askTool("ask_searcher", stuckSearcher(search.tool), readmeReader(read.tool));
    const parent = guardedAgent([ask], asking("ask_searcher"));
    const result = (await parent.invoke(question, { configurable: { thread_id: "fallback-node" } })) as Result;

    expect(search.runs).toEqual(["TODO"]); // the searcher was stopped
    const { answer, recorded } = answerOf(result, "ask_searcher");
    expect(answer?.status).not.toBe("error");
    expect(answer?.content).toBe("The TODOs are listed in README.md: 3 of them.");
    expect(answer?.artifact).toBeUndefined();
    expect(recorded).toBe(true);
    expect(finalWords(result.messages)).toBe("Report: The TODOs are listed in README.md: 3 of them.");
  });

  it("guardMiddleware: the tool fell back to another agent: its answer stands", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const read = countingTool("read_readme", () => "TODO: a, b, c");
    const ask = askTool("ask_searcher", stuckSearcher(search.tool), readmeReader(read.tool));
    const parent = createAgent({
      model: new ScriptedChatModel(asking("ask_searcher")),
      tools: [ask],
      middleware: [guardMiddleware({ interrupt: false }), loopDetectMiddleware()],
    });
    const result = (await parent.invoke(question)) as unknown as Result;

    expect(search.runs).toEqual(["TODO"]);
    const { answer, recorded } = answerOf(result, "ask_searcher");
    expect(answer?.status).not.toBe("error");
    expect(answer?.content).toBe("The TODOs are listed in README.md: 3 of them.");
    expect(recorded).toBe(true);
    expect(finalWords(result.messages)).toBe("Report: The TODOs are listed in README.md: 3 of them.");
  });

  it("two levels down: an unguarded agent handled its stopped sub-agent in its own words: the tool's answer stands", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    // The middle agent (no guards: a plain tool node) asks the searcher, sees it failed, answers in its own words.
    const middle = createReactAgent({
      llm: new ScriptedChatModel((messages) =>
        ToolMessage.isInstance(messages.at(-1))
          ? "The searcher could not finish; the TODOs are probably in src/."
          : { toolCalls: [{ name: "ask_searcher", args: { q: "Where are the TODOs?" } }] },
      ),
      tools: [askTool("ask_searcher", stuckSearcher(search.tool))],
    });
    const parent = guardedAgent([askTool("ask_lead", middle)], asking("ask_lead"));
    const result = (await parent.invoke(question, { configurable: { thread_id: "two-levels" } })) as Result;

    expect(search.runs).toEqual(["TODO"]);
    const { answer, recorded } = answerOf(result, "ask_lead");
    expect(answer?.status).not.toBe("error");
    expect(answer?.content).toBe("The searcher could not finish; the TODOs are probably in src/.");
    expect(recorded).toBe(true);
  });

  it("two levels down: an unguarded agent that passes its stopped sub-agent's words on: still reported as stopped", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const middle = createReactAgent({
      llm: new ScriptedChatModel((messages) => {
        const last = messages.at(-1);
        return ToolMessage.isInstance(last)
          ? String(last.content)
          : { toolCalls: [{ name: "ask_searcher", args: { q: "Where are the TODOs?" } }] };
      }),
      tools: [askTool("ask_searcher", stuckSearcher(search.tool))],
    });
    const parent = guardedAgent([askTool("ask_lead", middle)], asking("ask_lead"));
    const result = (await parent.invoke(question, { configurable: { thread_id: "two-levels-passed" } })) as Result;

    const { answer, recorded } = answerOf(result, "ask_lead");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(/^The sub-agent did not finish: the guards stopped it \(escalation\)/);
    expect(recorded).toBe(false);
  });

  it("a tool that wraps the stopped sub-agent's words in its own: still reported as stopped", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const ask = askTool("ask_searcher", stuckSearcher(search.tool), undefined, (w) => `The searcher says: ${w}`);
    const parent = guardedAgent([ask], asking("ask_searcher"));
    const result = (await parent.invoke(question, { configurable: { thread_id: "wrapped" } })) as Result;

    const { answer, recorded } = answerOf(result, "ask_searcher");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(/Its last words: The searcher says: /);
    expect(recorded).toBe(false);
  });

  it("a sub-agent whose final words are the model's wrap-up, handed back as they are: still reported as stopped", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    let n = 0;
    // A new search each turn: the iteration limit stops it, and the model wraps up in its own words.
    const looping = createAgent({
      model: new ScriptedChatModel(
        () => {
          n += 1;
          return { toolCalls: [{ name: "search_code", args: { q: `TODO ${n}` } }] };
        },
        { wrapUp: "I searched many times and found nothing." },
      ),
      tools: [search.tool],
      middleware: [guardMiddleware({ interrupt: false }), loopDetectMiddleware({ maxIterations: 6 })],
    }) as unknown as Agent;
    const parent = guardedAgent([askTool("ask_searcher", looping)], asking("ask_searcher"));
    const result = (await parent.invoke(question, { configurable: { thread_id: "wrap-up" } })) as Result;

    const { answer, recorded } = answerOf(result, "ask_searcher");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(/^The sub-agent did not finish: .*Its last words: I searched many times/);
    expect(recorded).toBe(false);
  });
});
