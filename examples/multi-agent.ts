/**
 * The guards across agents, with `@langchain/langgraph-supervisor`: a supervisor (its loop detector as the
 * post-model hook) and two workers (createAgent with `guardMiddleware` and `loopDetectMiddleware`), on scripted models.
 *
 * 1. A worker stuck in a loop: the researcher searches the same thing again and again. Its own guards stop it, its
 *    last words tell the supervisor it did not finish (with the verdict), and the supervisor answers the user.
 * 2. A hand-off ping-pong: the supervisor sends the task to a writer who cannot do it, again and again. The 4th
 *    hand-off in a row with nothing new between is not made; the run ends in words.
 * 3. One budget for the task: `configurable.taskBudget` bounds the turns of the supervisor and of every worker
 *    together (here 10), whoever spends them, where every step makes progress and no loop is caught.
 *
 *   npx tsx examples/multi-agent.ts
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import { createAgent } from "langchain";
import { guardVerdict, loopDetectHook } from "langgraph-guards";
import { guardMiddleware, loopDetectMiddleware } from "langgraph-guards/middleware";
import { ScriptedChatModel, type StepResponder } from "langgraph-guards/testing";
import { z } from "zod";

const searches: string[] = [];
const searchWeb = tool(
  async ({ q }) => {
    searches.push(q);
    return `No results for "${q}".`;
  },
  { name: "search_web", description: "Search the web.", schema: z.object({ q: z.string() }) },
);

/** A worker: createAgent with the guards (`interrupt: false`: no person to ask here, level 3 ends the run). */
function worker(name: string, respond: StepResponder) {
  return createAgent({
    name,
    model: new ScriptedChatModel(respond),
    tools: name === "writer" ? [] : [searchWeb],
    // The loop detector reads the words alone: a repeated call goes through the escalation (blocks first).
    middleware: [
      guardMiddleware({ interrupt: false }),
      loopDetectMiddleware({ maxIterations: 20, turns: { outputOf: (m) => m.text } }),
    ],
  }).graph;
}

/** The researcher: the same search, forever. */
const stuckResearcher = worker("researcher", () => ({
  toolCalls: [{ name: "search_web", args: { q: "2026 rainfall in Lisbon" } }],
}));
/** The writer: cannot write without the research, says so each time. */
const writer = worker("writer", () => "I need the research before I can write the report.");

/** A worker's last words: the message before the hand-back message the supervisor adds after it. */
function lastWords(messages: readonly BaseMessage[]): string {
  const back = messages.findLastIndex(
    (m) => AIMessage.isInstance(m) && m.content === "Transferring back to supervisor",
  );
  return back > 0 ? String(messages[back - 1]?.content) : "";
}

/** An analyst that makes progress: each time it is asked, one new search, then what it found. */
const analyst = worker("analyst", (messages) => {
  const last = messages.at(-1);
  if (ToolMessage.isInstance(last) && last.name === "search_web")
    return `Checked source ${searches.length}: nothing new there.`;
  return { toolCalls: [{ name: "search_web", args: { q: `Lisbon rainfall, source ${searches.length + 1}` } }] };
});

/** The supervisor's model: `plan` picks the hand-off, or the answer, from what the workers said so far. */
function supervisor(plan: StepResponder, agents = [stuckResearcher, writer]) {
  return createSupervisor({
    agents: agents as never,
    llm: new ScriptedChatModel(plan),
    postModelHook: loopDetectHook() as never,
  }).compile({ checkpointer: new MemorySaver() });
}

async function run(title: string, graph: ReturnType<typeof supervisor>, configurable: Record<string, unknown> = {}) {
  console.log(`\n=== ${title}`);
  const result = (await graph.invoke(
    { messages: [{ role: "user", content: "Write a short report on Lisbon's rainfall this year." }] },
    { configurable: { thread_id: title, ...configurable }, recursionLimit: 100 },
  )) as { messages: BaseMessage[] };
  for (const m of result.messages) {
    if (AIMessage.isInstance(m) && (m.tool_calls ?? []).length > 0) {
      console.log(`  ${m.name ?? "(model)"} → ${(m.tool_calls ?? []).map((c) => c.name).join(", ")}`);
    } else if (AIMessage.isInstance(m)) {
      console.log(`  ${m.name ?? "(final message)"}: ${String(m.content).replace(/\s+/g, " ").slice(0, 220)}`);
    } else if (ToolMessage.isInstance(m) && String(m.content).startsWith("Not run")) {
      console.log(`  (not run: ${m.name})`);
    }
  }
  const verdict = guardVerdict(result);
  console.log(
    verdict
      ? `  verdict: ${verdict.guard} / ${verdict.rule}${verdict.task ? " (the task's budget)" : ""}`
      : "  verdict: none (the supervisor answered)",
  );
  return result;
}

// 1. The researcher loops; the supervisor reads its last words and answers the user.
await run(
  "1. a worker stuck in a loop",
  supervisor((messages) => {
    const said = lastWords(messages);
    if (said !== "")
      return `I could not get the data: the researcher did not finish. ${said.slice(said.indexOf("[This agent"))}`;
    return { toolCalls: [{ name: "transfer_to_researcher", args: {} }] };
  }),
);
console.log(`  searches run: ${searches.length} (the repeats were blocked, then the researcher's run ended)`);

// 2. The supervisor keeps sending the task to the writer, who keeps answering the same thing.
await run(
  "2. a hand-off ping-pong",
  supervisor(() => ({ toolCalls: [{ name: "transfer_to_writer", args: {} }] })),
);

// 3. The supervisor asks the analyst for one more source, forever; each time is progress (a new search, new words),
// so no loop is caught: one budget for the whole task ends it, 10 model turns of the supervisor and the analyst.
searches.length = 0;
await run(
  "3. one budget for the task (taskBudget: { maxIterations: 10 })",
  supervisor(() => ({ toolCalls: [{ name: "transfer_to_analyst", args: {} }] }), [analyst]),
  { taskBudget: { maxIterations: 10 } },
);
console.log(`  searches run: ${searches.length}`);
