/**
 * Issue 43, class 13 (Hermes's incident: a replayed `execute_code` probe ran 147 times): volatile execution metadata
 * inside a JSON result (`duration_seconds`, the kernel's `execution_count`) made every answer of an identical probe
 * look new, so it was never stopped. They are normalized away now, as `duration` and `Out[7]` were: the 3rd identical
 * probe that answered the same is blocked. A probe whose output moves is progress and runs. Through createAgent,
 * createReactAgent and replay.
 */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { normalizeResult } from "../../src/core/index.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayGuards } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const CALLS = 5;
const PROBE = "import torch; print(torch.cuda.is_available())";
/** The kernel's answer to the n-th probe (from 1): the same output, or one that moves, with fresh metadata. */
const answer = (n: number, moving: boolean) =>
  JSON.stringify({
    output: moving ? `epoch ${n} done` : "False",
    duration_seconds: 0.4 + n / 100,
    kernel: { execution_count: 6 + n },
  });

function kernel(moving: boolean) {
  let n = 0;
  return tool(async () => answer(++n, moving), {
    name: "execute_code",
    description: "Runs code in a Python kernel",
    schema: z.object({ code: z.string() }),
  });
}
const script: ScriptStep[] = [
  ...Array.from(
    { length: CALLS },
    (): ScriptStep => ({ toolCalls: [{ name: "execute_code", args: { code: PROBE } }] }),
  ),
  "Done.",
];
const input = { messages: [{ role: "user", content: "Check the GPU." }] };
/** Per probe, whether it ran (not answered by a guard). */
const runs = (messages: BaseMessage[]) =>
  messages
    .filter((m) => ToolMessage.isInstance(m))
    .map((m) => !(m.artifact as { guard?: { blocked?: boolean } } | undefined)?.guard?.blocked);

async function viaCreateAgent(moving: boolean) {
  const agent = createAgent({
    model: new ScriptedChatModel(script),
    tools: [kernel(moving)],
    middleware: [guardMiddleware({ escalation: { enabled: false } })],
  });
  return runs((await agent.invoke(input, { recursionLimit: 60 })).messages as BaseMessage[]);
}

async function viaCreateReactAgent(moving: boolean) {
  const agent = createReactAgent({
    llm: new ScriptedChatModel(script),
    tools: new GuardedToolNode([kernel(moving)], { escalation: { enabled: false } }),
    stateSchema: GuardMessagesState,
  });
  return runs((await agent.invoke(input, { recursionLimit: 60 })).messages as BaseMessage[]);
}

function viaReplay(moving: boolean) {
  const steps: ReplayRun["steps"] = [{ role: "user", text: "Check the GPU." }];
  for (let n = 1; n <= CALLS; n += 1) {
    steps.push({ role: "assistant", text: "", tool_calls: [{ name: "execute_code", args: { code: PROBE } }] });
    steps.push({ role: "tool", ok: true, text: answer(n, moving) });
  }
  return replayGuards({ id: "probe", steps }).decisions.map((d) => d.action === "allow");
}

describe("issue 43, class 13: volatile execution metadata in a JSON result is no change", () => {
  it("normalizeResult: duration_seconds and the kernel's execution_count are placeholders; the output stays", () => {
    expect(normalizeResult(answer(1, false))).toBe(normalizeResult(answer(2, false)));
    expect(normalizeResult(answer(1, true))).not.toBe(normalizeResult(answer(2, true)));
  });

  for (const [name, run] of [
    ["createAgent", viaCreateAgent],
    ["createReactAgent", viaCreateReactAgent],
    ["replay", async (moving: boolean) => viaReplay(moving)],
  ] as const) {
    it(`${name}: the same probe answering the same is blocked from its 3rd call; one whose output moves runs`, async () => {
      expect(await run(false)).toEqual([true, true, false, false, false]);
      expect(await run(true)).toEqual([true, true, true, true, true]);
    });
  }
});
