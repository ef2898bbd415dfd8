/**
 * Issue 61, item 5: the hand-off check stops only what it sees is a hand-off loop. A hand-off is a tool the
 * conversation shows handing off (answered as langgraph-supervisor and langgraph-swarm answer one), not any tool named
 * `transfer_to_…`; and a worker's progress is judged by what the supervisor sees: the task it hands on (its words)
 * differing, or the worker's answer differing, not by the worker's wording alone.
 */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { GuardedToolNode, GuardMessagesState, guardVerdict, loopDetectHook } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";
import { countingTool, finalWords } from "./support.js";

const TASKS = ["Book the flight.", "Book the hotel.", "Rent a car.", "Buy the museum tickets.", "Reserve dinner."];

describe("hand-offs judged by evidence", () => {
  it("harm: a supervisor (default outputMode) hands 5 different tasks to a worker that confirms each with 'Done.': all 5 get done", async () => {
    const work = countingTool("work", (a) => `result of ${a.q}`);
    const worker = createAgent({
      name: "worker_a",
      model: new ScriptedChatModel((messages) => {
        const last = messages.at(-1);
        if (ToolMessage.isInstance(last) && last.name === "work") return "Done.";
        return { toolCalls: [{ name: "work", args: { q: `task ${work.runs.length + 1}` } }] };
      }),
      tools: [work.tool],
      middleware: [guardMiddleware({ interrupt: false }), loopDetectMiddleware()],
    }).graph;
    let turn = 0;
    const respond: StepResponder = () => {
      turn += 1;
      if (turn > TASKS.length) return "All the bookings are done.";
      return { content: TASKS[turn - 1] as string, toolCalls: [{ name: "transfer_to_worker_a", args: {} }] };
    };
    const graph = createSupervisor({
      agents: [worker] as never,
      llm: new ScriptedChatModel(respond),
      postModelHook: loopDetectHook() as never,
    }).compile({ checkpointer: new MemorySaver() });
    const result = (await graph.invoke(
      { messages: [{ role: "user", content: "Plan the trip." }] },
      { configurable: { thread_id: "five-tasks" }, recursionLimit: 200 },
    )) as { messages: BaseMessage[] };
    expect(work.runs).toHaveLength(5);
    expect(guardVerdict(result)).toBeUndefined();
    expect(finalWords(result.messages)).toBe("All the bookings are done.");
  });

  /** A bill payer: a user tool named `transfer_to_account` that moves money and answers in words. */
  const payer = () => {
    const transfer = countingTool("transfer_to_account", (a) => `Paid: ${a.q}`);
    const bills = ["rent 900", "power 80", "water 40", "phone 30", "internet 50", "insurance 120"];
    const respond: StepResponder = () => {
      const next = bills[transfer.runs.length];
      if (next === undefined) return "All 6 bills are paid.";
      return { toolCalls: [{ name: "transfer_to_account", args: { q: next } }] };
    };
    return { transfer, respond };
  };

  it("harm: createAgent paying 6 bills with its own `transfer_to_account` tool: every transfer runs", async () => {
    const { transfer, respond } = payer();
    const agent = createAgent({
      model: new ScriptedChatModel(respond),
      tools: [transfer.tool],
      middleware: [guardMiddleware(), loopDetectMiddleware()],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "Pay my bills." }] });
    expect(transfer.runs).toHaveLength(6);
    expect(guardVerdict(result)).toBeUndefined();
    expect(finalWords(result.messages)).toBe("All 6 bills are paid.");
  });

  it("harm: createReactAgent with loopDetectHook paying 6 bills with `transfer_to_account`: every transfer runs", async () => {
    const { transfer, respond } = payer();
    const agent = createReactAgent({
      llm: new ScriptedChatModel(respond),
      tools: new GuardedToolNode([transfer.tool]),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook(),
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "Pay my bills." }] });
    expect(transfer.runs).toHaveLength(6);
    expect(guardVerdict(result)).toBeUndefined();
    expect(finalWords(result.messages)).toBe("All 6 bills are paid.");
  });
});
