/**
 * Issue 43, class 3 (GitHub Actions polls by shell agents; OpenClaw's and Cline's poll loops): a shell poll that waits
 * inside its command (`sleep 60 && gh run view 123`) was blocked as a back-to-back duplicate at the 3rd poll and
 * the run paused at the 5th. A command that sleeps first is a wait, as a `wait` tool is: every poll runs until the
 * answer moves, and the run goes on. Since issue 63 the same poll without the sleep runs as well while its answer says
 * the CI run is still in progress (a poll that keeps answering the same thing is blocked only at its 20th: see
 * test/scenarios/polls-by-evidence.test.ts). Through createAgent, createReactAgent and replay.
 */
import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayGuards } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { callFacts } from "../../src/tool-calls/core/facts.js";
import { resolveToolGuardOptions } from "../../src/tool-calls/core/options.js";

const POLLS = 8;
/** A CI run that is in progress for the first 7 polls and done at the 8th. */
function ciShell() {
  let polls = 0;
  return tool(
    async ({ command }) => {
      if (!command.includes("gh run view")) return "ok";
      polls += 1;
      return polls < POLLS ? "status: in_progress" : "status: completed, conclusion: success";
    },
    { name: "bash", description: "Runs a shell command", schema: z.object({ command: z.string() }) },
  );
}
const poll = (command: string): ScriptStep[] => [
  ...Array.from(
    { length: POLLS },
    (): ScriptStep => ({ content: "Waiting for CI.", toolCalls: [{ name: "bash", args: { command } }] }),
  ),
  "CI passed.",
];
const WAITING = "sleep 60 && gh run view 123";
const input = { messages: [{ role: "user", content: "Wait for CI, then tell me." }] };
const ran = (messages: BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && !(m.artifact as { guard?: unknown } | undefined)?.guard).length;

async function viaCreateAgent(command: string) {
  const agent = createAgent({
    model: new ScriptedChatModel(poll(command)),
    tools: [ciShell()],
    middleware: [guardMiddleware()],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(input, { configurable: { thread_id: command }, recursionLimit: 100 });
  return out.messages as BaseMessage[];
}

async function viaCreateReactAgent(command: string) {
  const tools = new GuardedToolNode([ciShell()]);
  const agent = createReactAgent({
    llm: new ScriptedChatModel(poll(command)),
    tools,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(tools),
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(input, { configurable: { thread_id: command }, recursionLimit: 100 });
  return out.messages as BaseMessage[];
}

function replayed(command: string) {
  const steps: ReplayRun["steps"] = [{ role: "user", text: "Wait for CI, then tell me." }];
  for (let i = 1; i <= POLLS; i += 1) {
    steps.push({ role: "assistant", text: "Waiting for CI.", tool_calls: [{ name: "bash", args: { command } }] });
    steps.push({ role: "tool", ok: true, text: i < POLLS ? "status: in_progress" : "status: completed" });
  }
  return replayGuards({ id: "ci-poll", steps });
}

/** Whether a call waits, as its facts say (by its name, or a shell command that sleeps first). */
const callWaits = (name: string, args: unknown) => callFacts({ name, args }, resolveToolGuardOptions()).waits;

describe("issue 43, class 3: a poll that waits inside its command is a wait", () => {
  it("a call waits: a wait tool, or a shell command whose first step is a sleep of some time", () => {
    expect(callWaits("wait_for_build", {})).toBe(true);
    for (const command of [
      "sleep 60 && gh run view 123",
      "sleep 2m; kubectl get pods",
      "  sleep 0.5\nmake check",
      "sleep 5",
    ])
      expect(callWaits("bash", { command }), command).toBe(true);
    for (const command of ["gh run view 123", "sleep 0 && ls", "make && sleep 60", "echo sleep 60", "sleepy 5 && ls"])
      expect(callWaits("bash", { command }), command).toBe(false);
    expect(callWaits("read_file", { command: "sleep 60" })).toBe(false); // not a shell tool
  });

  for (const [name, run] of [
    ["createAgent", viaCreateAgent],
    ["createReactAgent", viaCreateReactAgent],
  ] as const) {
    it(`${name}: \`${WAITING}\` eight times: every poll runs, the run ends with the model's answer`, async () => {
      const messages = await run(WAITING);
      expect(ran(messages)).toBe(POLLS);
      expect((messages.at(-1) as AIMessage).content).toBe("CI passed.");
    });

    it(`${name}: the same poll without the sleep, answering "in_progress", runs until the CI run is done`, async () => {
      const messages = await run("gh run view 123");
      expect(ran(messages)).toBe(POLLS);
      expect((messages.at(-1) as AIMessage).content).toBe("CI passed.");
    });
  }

  it("replay: no poll is blocked, with the sleep or while the answer says in progress", () => {
    expect(replayed(WAITING).decisions.filter((d) => d.action !== "allow")).toEqual([]);
    expect(replayed("gh run view 123").decisions.filter((d) => d.action !== "allow")).toEqual([]);
  });
});
