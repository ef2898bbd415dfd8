/**
 * Issue 47, item 5: compaction. langchain's `summarizationMiddleware` replaces old messages with a summary while the
 * agent runs (the person's message too, once it is old enough); deepagents does the same, and so may a middleware
 * of your own. The guards' counts live in their channels, not in the messages, and a summary is not a person's
 * message: a loop is stopped at the same call with or without the summaries, and the run's counters do not start
 * again at each one (a loop that survived 14 hours because each compaction reset them: openclaw/openclaw#126545).
 */
import { type BaseMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { MemorySaver, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, createMiddleware, summarizationMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { guardVerdict } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { countingTool } from "./support.js";

type Loop = "same-call" | "endless-progress";
type Compaction = "none" | "summarizationMiddleware" | "own middleware";

/**
 * A compaction of one's own: before a model call, when the conversation has more than 6 messages, everything but
 * the last AI message and its answers is replaced by a summary in a plain human message (no marker).
 */
function ownCompaction(counted: { summaries: number }) {
  return createMiddleware({
    name: "OwnCompaction",
    beforeModel: (state) => {
      const messages = state.messages;
      if (messages.length <= 6) return undefined;
      const lastAI = messages.findLastIndex((m) => m.getType() === "ai");
      counted.summaries += 1;
      const summary = new HumanMessage(
        `Summary of the conversation so far (${counted.summaries}): searching for TODOs.`,
      );
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), summary, ...messages.slice(lastAI)] };
    },
  });
}

async function run(loop: Loop, compaction: Compaction) {
  const search = countingTool("search_code", (a) => `no match for ${a.q}`);
  const counted = { summaries: 0 };
  let n = 0;
  const model = new ScriptedChatModel(() => {
    n += 1;
    // same-call: one identical call forever (the tool-call guards end it at level 4); endless-progress: a new
    // search each turn (nothing repeats: only the iteration limit ends it).
    const q = loop === "same-call" ? "TODO" : `TODO in module ${n}`;
    return { toolCalls: [{ name: "search_code", args: { q } }] };
  });
  const summarizer = new ScriptedChatModel(() => {
    counted.summaries += 1;
    return "Summary: the agent has been searching the code for TODOs.";
  });
  const compacting: AgentMiddleware[] =
    compaction === "summarizationMiddleware"
      ? [summarizationMiddleware({ model: summarizer, trigger: { messages: 5 }, keep: { messages: 2 } })]
      : compaction === "own middleware"
        ? [ownCompaction(counted)]
        : [];
  const agent = createAgent({
    model,
    tools: [search.tool],
    middleware: [
      ...compacting,
      guardMiddleware({ interrupt: false }),
      loopDetectMiddleware({ maxIterations: 12, turns: { outputOf: (m) => m.text } }),
    ] as AgentMiddleware[],
    checkpointer: new MemorySaver(),
  });
  const result = (await agent.invoke(
    { messages: [{ role: "user", content: "Find the TODOs." }] },
    { configurable: { thread_id: `${loop}-${compaction}` }, recursionLimit: 500 },
  )) as { messages: BaseMessage[] };
  return { verdict: guardVerdict(result), runs: search.runs, summaries: counted.summaries };
}

describe.each(["summarizationMiddleware", "own middleware"] as const)("a looping agent behind %s", (compaction) => {
  it.each(["same-call", "endless-progress"] as const)("%s: is stopped as without it", async (loop) => {
    const plain = await run(loop, "none");
    const compacted = await run(loop, compaction);
    expect(compacted.summaries).toBeGreaterThan(0); // the history was rewritten, the person message with it
    expect(compacted.verdict).toMatchObject({ guard: plain.verdict?.guard, rule: plain.verdict?.rule });
    expect(compacted.runs).toEqual(plain.runs);
    if (loop === "endless-progress") expect(compacted.runs).toHaveLength(12); // maxIterations: 12 full turns
  });
});
