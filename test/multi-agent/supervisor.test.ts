/**
 * Issue 47: the guards under `@langchain/langgraph-supervisor`: the supervisor (a createReactAgent) with
 * `loopDetectHook` as its post-model hook, each worker a createAgent with `guardMiddleware` and
 * `loopDetectMiddleware`. Work that progresses is never stopped (10 tasks to 3 workers: every call runs); a
 * supervisor that hands a task to a worker who cannot do it, again and again, is stopped within 4 hand-offs and ends
 * in words; a worker the guards stop tells the supervisor so in its last words.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { GuardMessagesState, guardVerdict, loopDetectHook } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";
import { countingTool, finalWords } from "./support.js";

const WORKERS = ["worker_a", "worker_b", "worker_c"];

/** A worker: a createAgent with the guards, answering with `respond`. */
function worker(name: string, tools: ReturnType<typeof countingTool>["tool"][], respond: StepResponder) {
  return createAgent({
    name,
    model: new ScriptedChatModel(respond),
    tools,
    middleware: [guardMiddleware({ interrupt: false }), loopDetectMiddleware({ maxIterations: 20 })],
  }).graph;
}

/** The supervisor graph, compiled, with the guards' loop detector as its post-model hook. */
function supervisor(agents: ReturnType<typeof worker>[], respond: StepResponder, shared = false) {
  return createSupervisor({
    agents: agents as never,
    llm: new ScriptedChatModel(respond),
    postModelHook: loopDetectHook() as never,
    ...(shared ? { stateSchema: GuardMessagesState } : {}),
  }).compile({ checkpointer: new MemorySaver() });
}

const invoke = async (graph: ReturnType<typeof supervisor>, thread: string) =>
  (await graph.invoke(
    { messages: [{ role: "user", content: "Do the tasks." }] },
    { configurable: { thread_id: thread }, recursionLimit: 200 },
  )) as { messages: BaseMessage[] };

/** The hand-offs the supervisor made (not those the guards stopped). */
const delegations = (messages: readonly BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && String(m.content).startsWith("Successfully transferred to"));

/** A worker's last words: the message before the last hand-back message the supervisor adds after it. */
const workerWords = (messages: readonly BaseMessage[]) => {
  const back = messages.findLastIndex(
    (m) => AIMessage.isInstance(m) && m.content === "Transferring back to supervisor",
  );
  return back > 0 ? messages[back - 1] : undefined;
};

describe.each([false, true])("a supervisor (guard channels in its state: %s)", (shared) => {
  it("harm: delegating 10 different tasks to 3 workers that make progress runs every call", async () => {
    const work = countingTool("work", (a) => `result of ${a.q}`);
    const respond =
      (name: string): StepResponder =>
      (messages) => {
        const last = messages.at(-1);
        if (ToolMessage.isInstance(last) && last.name === "work") return `${name} finished: ${last.content}`;
        return { toolCalls: [{ name: "work", args: { q: `task ${delegations(messages).length} (${name})` } }] };
      };
    let turn = 0;
    const graph = supervisor(
      WORKERS.map((name) => worker(name, [work.tool], respond(name))),
      () => {
        turn += 1;
        if (turn > 10) return "All 10 tasks are done.";
        return { toolCalls: [{ name: `transfer_to_${WORKERS[(turn - 1) % 3]}`, args: {} }] };
      },
      shared,
    );
    const result = await invoke(graph, `harm-${shared}`);
    expect(work.runs).toHaveLength(10);
    expect(new Set(work.runs).size).toBe(10);
    expect(delegations(result.messages)).toHaveLength(10);
    expect(guardVerdict(result)).toBeUndefined();
    expect(finalWords(result.messages)).toBe("All 10 tasks are done.");
  });

  it("a hand-off ping-pong (a task handed to a worker who cannot do it, again and again) stops within 4 hand-offs", async () => {
    let turns = 0;
    const graph = supervisor(
      [worker("worker_a", [], () => "I cannot do that.")],
      () => {
        turns += 1;
        return { toolCalls: [{ name: "transfer_to_worker_a", args: {} }] };
      },
      shared,
    );
    const result = await invoke(graph, `ping-pong-${shared}`);
    // worker_a answered twice, both times the same: the supervisor's third hand-off is the 4th in a row without
    // anything new (hand-off, back, hand-off, back): not made.
    expect(delegations(result.messages)).toHaveLength(2);
    expect(turns).toBe(3);
    expect(guardVerdict(result)).toMatchObject({ guard: "loop", rule: "handoffs", value: 4, limit: 4 });
    expect(finalWords(result.messages)).toMatch(/handed the task back and forth 4 times/);
  });

  it("a worker stuck in a loop is stopped, tells the supervisor so, and the supervisor ends in words", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const stuck = worker("worker_a", [search.tool], () => ({
      toolCalls: [{ name: "search_code", args: { q: "TODO" } }],
    }));
    const graph = supervisor(
      [stuck],
      (messages) => {
        const said = workerWords(messages);
        if (said !== undefined) return `The search failed: ${String(said.content).slice(-160)}`;
        return { toolCalls: [{ name: "transfer_to_worker_a", args: {} }] };
      },
      shared,
    );
    const result = await invoke(graph, `stuck-worker-${shared}`);
    expect(search.runs).toEqual(["TODO"]);
    const workerEnd = workerWords(result.messages);
    expect(String(workerEnd?.content)).toMatch(
      /\n\n\[This agent did not finish: the guards stopped it \((escalation|loop)\)[^\]]*Its task is not done\.\]$/,
    );
    expect(finalWords(result.messages)).toMatch(/^The search failed: .*Its task is not done\.\]$/s);
    expect(guardVerdict(result)).toBeUndefined(); // the supervisor ended the run itself, in words
  });
});
