/**
 * The README's code, run as written: the quick start (createAgent with guardMiddleware and loopDetectMiddleware) and
 * the createReactAgent block, each on a model that retries a failing call forever, end cleanly (an interrupt with a
 * checkpointer, then a final AI message), never with GraphRecursionError.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Command, isInterrupted } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it, vi } from "vitest";
import { escalationHook, GuardedToolNode, GuardMessagesState, isEscalationInterrupt } from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";

const root = join(import.meta.dirname, "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The one ```ts block right after the `<!-- quick-start -->` marker. */
function quickStart(): string {
  const match = /<!-- quick-start -->\n```ts\n([\s\S]*?)\n```/.exec(readme);
  if (!match?.[1]) throw new Error("README.md has no <!-- quick-start --> ts block");
  return match[1];
}
/** The createReactAgent block: the one whose code imports createReactAgent (it uses llm, tools, checkpointer). */
function reactBlock(): string {
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? "");
  const found = blocks.filter((b) => b.includes("createReactAgent(") && !b.includes("createAgent("));
  if (found.length !== 1) throw new Error(`README.md has ${found.length} createReactAgent blocks, not 1`);
  return found[0] ?? "";
}

const dir = join(root, ".vitest-tmp", `quick-start-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const toolCallsOf = (messages: BaseMessage[]) =>
  messages.filter((m): m is AIMessage => AIMessage.isInstance(m)).flatMap((m) => m.tool_calls ?? []);

interface QuickStart {
  first: { messages: BaseMessage[]; __interrupt__?: { value: unknown }[] };
  last: { messages: BaseMessage[] };
  getWeather: StructuredToolInterface;
}

/** Imports `code` as a module of its own (importing the package by name) and keeps what it printed. */
async function runModule<T>(name: string, code: string): Promise<T & { printed: unknown[] }> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, code);
  const printed: unknown[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args[0]));
  try {
    return { ...((await import(pathToFileURL(file).href)) as T), printed };
  } finally {
    log.mockRestore();
  }
}

let ran: Promise<QuickStart & { printed: unknown[] }> | undefined;
/** Runs the README's quick start once. */
const runQuickStart = () => {
  ran ??= runModule<QuickStart>("quick-start.ts", `${quickStart()}\nexport { first, last, getWeather };\n`);
  return ran;
};

/**
 * Strike 3 asked a person (the first print), and after the resume the run ended with a final AI message that says
 * why (the second print). "weather service unavailable" may pass, so two identical retries ran (issue 43, class 5;
 * issue 63); the 4th and 5th calls were blocked, the 6th asked (no person is asked before the 5th identical call:
 * class 8), and the 7th was not run after 4 blocked repeats.
 */
function expectStrikes3And4(
  first: QuickStart["first"],
  last: QuickStart["last"],
  { printed, stops }: { printed?: unknown[]; stops: string[] },
) {
  const ask = first.__interrupt__?.[0]?.value;
  expect(isEscalationInterrupt(ask)).toBe(true);
  expect(ask).toMatchObject({ level: 3, tool: "get_weather", attempts: 3, args: { city: "Paris" } });
  if (printed) expect(printed[0]).toEqual(ask);
  const final = last.messages.at(-1) as AIMessage;
  expect(AIMessage.isInstance(final)).toBe(true);
  expect((final.tool_calls ?? []).length).toBe(0);
  const guard = final.response_metadata.guard as { kind: string; message?: string };
  expect(stops).toContain(guard.kind);
  expect(`${final.content}\n${guard.message ?? ""}`).toMatch(
    /I stopped this run because I kept repeating one step: I called `get_weather`|stopped after 4 blocked repeats of `get_weather`/,
  );
  if (printed) expect(printed[1]).toBe(final.content);
  expect(toolCallsOf(last.messages).length).toBe(7);
  expect(validHistory(last.messages)).toEqual([]);
}

describe("README quick start (createAgent)", () => {
  it("is at most ~20 lines and near the top, before the createReactAgent block", () => {
    expect(quickStart().split("\n").length).toBeLessThanOrEqual(22);
    expect(readme.indexOf("<!-- quick-start -->")).toBeLessThan(5_000);
    expect(readme.indexOf("<!-- quick-start -->")).toBeLessThan(readme.indexOf(reactBlock()));
    expect(quickStart()).toContain("createAgent(");
  });

  it("runs as written: strike 3 interrupts, the resume goes on, strike 4 ends with a final AI message", async () => {
    const { first, last, printed } = await runQuickStart();
    expectStrikes3And4(first, last, { printed, stops: ["escalation", "failures"] });
  });
});

describe("README createReactAgent block", () => {
  it("runs as written on the quick start's tool and model: the same strikes 3 and 4", async () => {
    const preamble = `import { MemorySaver } from "@langchain/langgraph";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { getWeather } from "./quick-start.js";
const llm = new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const tools = [getWeather];
const checkpointer = new MemorySaver();
`;
    await runQuickStart(); // writes quick-start.ts, which the block's preamble imports getWeather from
    const { agent } = await runModule<{ agent: ReturnType<typeof createReactAgent> }>(
      "react.ts",
      `${preamble}${reactBlock()}\nexport { agent };\n`,
    );
    const config = { configurable: { thread_id: "react" } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] }, config);
    expect(isInterrupted(first)).toBe(true);
    const last = await agent.invoke(new Command({ resume: "Say you cannot get it." }), config);
    expectStrikes3And4(first as QuickStart["first"], last as QuickStart["last"], { stops: ["escalation"] });
  });

  it("without a checkpointer the same agent ends with a final AI message within 8 tool calls", async () => {
    const { getWeather } = await runQuickStart();
    const llm = new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
    const tools = new GuardedToolNode([getWeather]);
    const agent = createReactAgent({
      llm,
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools),
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 3 });
    expect(toolCallsOf(out.messages).length).toBeLessThanOrEqual(8);
    expect(llm.stepsTaken).toBe(6); // the failure, its two retries, two blocks, and the 6th call that ends the run
    expect(validHistory(out.messages)).toEqual([]);
  });
});
