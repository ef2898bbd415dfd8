/**
 * Issue 43, class 7 (measured from outside: a countdown, a branch head, a reservation): the normalizer merged results
 * that changed as data. `10 → 9 minutes remaining`, a branch head that moved to a new SHA, a new reservation id each
 * call: the 3rd identical call was blocked as "the same result". A time left and a bare id are data now (only a time
 * taken and an id under an id-like key are volatile): every call whose answer moved runs. Through createAgent,
 * createReactAgent and replay.
 */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayGuards } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const CALLS = 6;
/** What each tool answers at its n-th call (from 1): data that moves every time. */
const ANSWERS: Record<string, (n: number) => string> = {
  get_build_status: (n) => `Build queued: ${12 - n} minutes remaining`,
  branch_head: (n) => `main is at ${(0x3f9a2b1c4d5e + n * 7919).toString(16)}6f708192a3b4c5d6e7f8091a2b3c`,
  reserve_table: (n) => `Reservation R7K2M9Q4X8P3L6N5B1V${n} confirmed for 19:00`,
};

function tools() {
  return Object.entries(ANSWERS).map(([name, answer]) => {
    let n = 0;
    return tool(async () => answer(++n), { name, description: `${name}`, schema: z.object({ ref: z.string() }) });
  });
}
const script = (name: string): ScriptStep[] => [
  ...Array.from({ length: CALLS }, (): ScriptStep => ({ toolCalls: [{ name, args: { ref: "main" } }] })),
  "Done.",
];
const input = { messages: [{ role: "user", content: "Keep an eye on it." }] };
const ranAll = (messages: BaseMessage[]) =>
  messages
    .filter((m) => ToolMessage.isInstance(m))
    .map((m) => !(m.artifact as { guard?: { blocked?: boolean } } | undefined)?.guard?.blocked);

describe("issue 43, class 7: a result that changed as data is a change", () => {
  for (const name of Object.keys(ANSWERS)) {
    it(`${name}: all ${CALLS} identical calls run, through createAgent, createReactAgent and replay`, async () => {
      const agent = createAgent({
        model: new ScriptedChatModel(script(name)),
        tools: tools(),
        middleware: [guardMiddleware()],
      });
      const viaAgent = await agent.invoke(input, { recursionLimit: 60 });
      expect(ranAll(viaAgent.messages as BaseMessage[])).toEqual(Array(CALLS).fill(true));

      const react = createReactAgent({
        llm: new ScriptedChatModel(script(name)),
        tools: new GuardedToolNode(tools()),
        stateSchema: GuardMessagesState,
      });
      const viaReact = await react.invoke(input, { recursionLimit: 60 });
      expect(ranAll(viaReact.messages as BaseMessage[])).toEqual(Array(CALLS).fill(true));

      const steps: ReplayRun["steps"] = [{ role: "user", text: "Keep an eye on it." }];
      for (let n = 1; n <= CALLS; n += 1) {
        steps.push({ role: "assistant", text: "", tool_calls: [{ name, args: { ref: "main" } }] });
        steps.push({ role: "tool", ok: true, text: ANSWERS[name]?.(n) ?? "" });
      }
      expect(replayGuards({ id: name, steps }).decisions.map((d) => d.action)).toEqual(Array(CALLS).fill("allow"));
    });
  }
});
