/**
 * guardMiddleware plans a response in `afterModel` and runs its calls in `wrapToolCall`. When `afterModel` has
 * nothing to write (the usual turn: every call allowed, nothing to tell the stream), it returns nothing, so that
 * createAgent writes no channel for it, and `wrapToolCall` finds the plan in memory; after a resume from a checkpoint
 * between the two hooks it finds it in the state when it is the same response's, else plans the call again.
 *
 * - The usual turn's `afterModel` step leaves every channel's version as it was (at HEAD before the change: `messages`,
 *   `toolGuard`, `guardLog` and `_guardPending` written at every turn).
 * - Property: pausing the run between the hooks at every response (an interrupt in another middleware's
 *   `afterModel`, resumed from the checkpoint) changes nothing the guards decide: the same tools run, with the same
 *   answers and the same `toolGuard` counts, as in the run without pauses. Without the check that a stored plan is
 *   the same response's, a plan left from an earlier response would be resumed (or, not knowing the call, let it run
 *   unrecorded).
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command, interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import fc from "fast-check";
import { createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import type { ToolGuardState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../../src/testing/index.js";
import { docsTools } from "../support/docs-tools.js";

/** A middleware that stops the run after every model response with calls, before they run (an `interrupt`). */
const pause = createMiddleware({
  name: "Pause",
  afterModel: (state) => {
    const last = state.messages.at(-1);
    if (AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0) interrupt("go on?");
    return undefined;
  },
});

interface Outcome {
  ran: string[];
  answers: string[];
  stats: ToolGuardState["stats"];
  pauses: number;
}

async function run(script: ScriptStep[], paused: boolean): Promise<Outcome> {
  const ran: string[] = [];
  const checkpointer = new MemorySaver();
  const agent = createAgent({
    model: new ScriptedChatModel([...script, "Done."], { whenExhausted: "throw" }),
    tools: docsTools(ran),
    // afterModel hooks run last-listed first: the guard plans, then the pause stops the run before the tools.
    middleware: paused
      ? [pause, guardMiddleware({ interrupt: false, wrapUp: "canned" })]
      : [guardMiddleware({ interrupt: false, wrapUp: "canned" })],
    checkpointer,
  });
  const config = { configurable: { thread_id: "t" }, recursionLimit: 200 };
  let result = await agent.invoke({ messages: [{ role: "user", content: "Look it up." }] }, config);
  let pauses = 0;
  while (isInterrupted(result)) {
    pauses += 1;
    result = await agent.invoke(new Command({ resume: true }), config);
  }
  const messages = result.messages as BaseMessage[];
  const answers = messages.filter((m) => ToolMessage.isInstance(m)).map((m) => `${m.name}: ${String(m.content)}`);
  return { ran, answers, stats: (result.toolGuard as ToolGuardState).stats, pauses };
}

describe("guardMiddleware between afterModel and wrapToolCall", () => {
  it("writes no channel after the model on the usual turn", async () => {
    const ran: string[] = [];
    const checkpointer = new MemorySaver();
    const agent = createAgent({
      model: new ScriptedChatModel([
        { toolCalls: [{ name: "search_docs", args: { q: "a" } }] },
        { toolCalls: [{ name: "search_docs", args: { q: "b" } }] },
        "Done.",
      ]),
      tools: docsTools(ran),
      middleware: [guardMiddleware()],
      checkpointer,
    });
    const config = { configurable: { thread_id: "quiet" } };
    await agent.invoke({ messages: [{ role: "user", content: "Look it up." }] }, config);
    const history = [];
    for await (const snapshot of agent.graph.getStateHistory(config)) history.unshift(snapshot);
    // The checkpoint before the guard's afterModel step of the second response, and the one after it (the first
    // response's step writes: it starts the run).
    const steps = history.flatMap((s, i) => (s.next.includes("GuardMiddleware.after_model") ? [i] : []));
    expect(steps).toHaveLength(3);
    const at = steps[1]!;
    const before = await checkpointer.getTuple(history[at]!.config);
    const after = await checkpointer.getTuple(history[at + 1]!.config);
    const versions = (t: typeof before) => t?.checkpoint.channel_versions ?? {};
    for (const channel of ["messages", "toolGuard", "guardLog", "_guardPending"]) {
      expect(versions(after)[channel], channel).toEqual(versions(before)[channel]);
    }
    expect(ran).toEqual(["search a", "search b"]);
  });

  it("decides alike with the run paused between the hooks at every response", async () => {
    const call = fc.constantFrom<ScriptedToolCall>(
      { name: "search_docs", args: { q: "a" } },
      { name: "search_docs", args: { q: "b" } },
      { name: "search_docs", args: { q: "broken" } },
      { name: "write_note", args: { text: "x" } },
    );
    const step = fc.array(call, { minLength: 1, maxLength: 2 }).map((toolCalls): ScriptStep => ({ toolCalls }));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 7 }), async (script) => {
        const plain = await run(script, false);
        const paused = await run(script, true);
        expect(paused.pauses).toBeGreaterThan(0);
        expect({ ...paused, pauses: 0 }).toEqual({ ...plain, pauses: 0 });
      }),
      { numRuns: 25, seed: 44 },
    );
  }, 60_000);
});
