/**
 * The README's quick start, run as written: a createReactAgent whose model retries a failing call forever ends
 * cleanly (an interrupt with a checkpointer, a final AI message without one), never with GraphRecursionError.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
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

const dir = join(root, ".vitest-tmp", `quick-start-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const toolCallsOf = (messages: BaseMessage[]) =>
  messages.filter((m): m is AIMessage => AIMessage.isInstance(m)).flatMap((m) => m.tool_calls ?? []);

interface QuickStart {
  first: { messages: BaseMessage[]; __interrupt__?: { value: unknown }[] };
  last: { messages: BaseMessage[] };
  getWeather: StructuredToolInterface;
}

let ran: Promise<QuickStart & { printed: unknown[] }> | undefined;

/** Runs the README's block once (as a module of its own, importing the package by name) and keeps what it printed. */
function runQuickStart(): Promise<QuickStart & { printed: unknown[] }> {
  ran ??= (async () => {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "quick-start.ts");
    writeFileSync(file, `${quickStart()}\nexport { first, last, getWeather };\n`);
    const printed: unknown[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args[0]));
    try {
      return { ...((await import(pathToFileURL(file).href)) as QuickStart), printed };
    } finally {
      log.mockRestore();
    }
  })();
  return ran;
}

describe("README quick start", () => {
  it("is at most ~20 lines and near the top", () => {
    expect(quickStart().split("\n").length).toBeLessThanOrEqual(22);
    expect(readme.indexOf("<!-- quick-start -->")).toBeLessThan(4_000);
  });

  it("runs as written: strike 3 interrupts, the resume goes on, strike 4 ends with a final AI message", async () => {
    const { first, last, printed } = await runQuickStart();
    const ask = first.__interrupt__?.[0]?.value;
    expect(isEscalationInterrupt(ask)).toBe(true);
    expect(ask).toMatchObject({ level: 3, tool: "get_weather", attempts: 3, args: { city: "Paris" } });
    expect(printed[0]).toEqual(ask);

    const final = last.messages.at(-1) as AIMessage;
    expect(AIMessage.isInstance(final)).toBe(true);
    expect((final.tool_calls ?? []).length).toBe(0);
    expect(final.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4 });
    expect(String(final.content)).toMatch(
      /^I stopped this run because I kept repeating one step: I called `get_weather`/,
    );
    expect(String(final.content)).toContain("When it last ran, it failed: weather service unavailable");
    expect(printed[1]).toBe(final.content);
    expect(toolCallsOf(last.messages).length).toBeLessThanOrEqual(8);
    expect(validHistory(last.messages)).toEqual([]);
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
    expect(llm.stepsTaken).toBe(4);
    expect(validHistory(out.messages)).toEqual([]);
  });
});
