/**
 * Tools that throw anything but an Error: GuardedToolNode and guardMiddleware answer the call with an error
 * ToolMessage, the same as LangGraph's ToolNode (handleToolErrors true) or a better one, and never crash; graph
 * interrupts still pass through.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { GraphInterrupt, interrupt, isGraphInterrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import fc from "fast-check";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { emptyToolGuardState, type ToolGuardState } from "../../src/core/index.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { describeThrown, toolErrorContent } from "../../src/tool-calls/answers.js";

const TOOL = "flaky_tool";

/** A Proxy whose every trap throws. */
const hostileProxy = (target: object) =>
  new Proxy(target, {
    get() {
      throw new Error("trap: get");
    },
    getPrototypeOf() {
      throw new Error("trap: getPrototypeOf");
    },
    has() {
      throw new Error("trap: has");
    },
    ownKeys() {
      throw new Error("trap: ownKeys");
    },
    getOwnPropertyDescriptor() {
      throw new Error("trap: getOwnPropertyDescriptor");
    },
  });

class MessagelessError extends Error {
  override get message(): string {
    throw new Error("no message for you");
  }
}
class NamelessError extends Error {
  override get name(): string {
    throw new Error("no name for you");
  }
}

function fixedValues(): [string, unknown][] {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const circularArray: unknown[] = [1];
  circularArray.push(circularArray);
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const nullProto = Object.create(null) as Record<string, unknown>;
  const nullProtoMessage = Object.create(null) as Record<string, unknown>;
  nullProtoMessage.message = "from a null-prototype object";
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 5000; i += 1) deep = { deep };
  const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
  const frozenError = Object.freeze(new Error("frozen error"));
  return [
    ["undefined", undefined],
    ["null", null],
    ["empty string", ""],
    ["string", "rate limited"],
    ["blank string", "   "],
    ["huge string", "x".repeat(100_000)],
    ["zero", 0],
    ["number", 42],
    ["NaN", Number.NaN],
    ["negative zero", -0],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["true", true],
    ["false", false],
    ["bigint", 10n],
    ["symbol", Symbol("oops")],
    ["anonymous symbol", Symbol()],
    ["arrow function", () => 1],
    ["named function", function namedThrowable() {}],
    ["class", class Thrown {}],
    ["empty object", {}],
    ["empty array", []],
    ["array", [1, "two", null]],
    ["object with a string message", { message: "plain object message" }],
    ["object with an empty message", { message: "" }],
    ["object with a numeric message", { message: 42 }],
    ["object with an object message", { message: { nested: true } }],
    ["object with a null-prototype message", { message: Object.create(null) }],
    ["object with a symbol message", { message: Symbol("m") }],
    [
      "object with a throwing message getter",
      {
        get message(): string {
          throw new Error("getter");
        },
      },
    ],
    [
      "object with a throwing name getter",
      {
        message: "has a message",
        get name(): string {
          throw new Error("getter");
        },
      },
    ],
    [
      "object with a throwing toString",
      {
        toString(): string {
          throw new Error("toString");
        },
      },
    ],
    ["object with a non-function toString", { toString: 5, valueOf: "x" }],
    [
      "object with a throwing toJSON",
      {
        toJSON() {
          throw new Error("toJSON");
        },
      },
    ],
    [
      "object with a throwing getter",
      {
        get a(): number {
          throw new Error("getter a");
        },
      },
    ],
    ["null-prototype object", nullProto],
    ["null-prototype object with a message", nullProtoMessage],
    ["Proxy with throwing traps", hostileProxy({})],
    ["Proxy over an Error", hostileProxy(new Error("hidden"))],
    ["revoked Proxy", revocable.proxy],
    ["transparent Proxy over an Error", new Proxy(new Error("seen through a proxy"), {})],
    ["Error with a throwing message getter", new MessagelessError()],
    ["Error with a throwing name getter", new NamelessError("named badly")],
    ["Error", new Error("plain error")],
    ["Error with an empty message", new Error("")],
    ["Error with a huge message", new Error("y".repeat(50_000))],
    ["Error with a circular cause", new Error("with cause", { cause: circular })],
    ["TypeError", new TypeError("type error")],
    ["RangeError", new RangeError("range error")],
    ["AggregateError", new AggregateError([new Error("first"), "second", undefined], "many failed")],
    ["AggregateError without a message", new AggregateError([new Error("only")])],
    ["DOMException", new DOMException("aborted", "AbortError")],
    ["frozen Error", frozenError],
    ["frozen object", Object.freeze({ code: "E_FROZEN" })],
    ["circular object", circular],
    ["circular array", circularArray],
    ["deep object", deep],
    ["wide object", wide],
    ["Date", new Date(0)],
    ["invalid Date", new Date(Number.NaN)],
    ["RegExp", /x+/g],
    ["Map", new Map([[1, { a: 2 }]])],
    ["Set", new Set([1, 2])],
    ["WeakMap", new WeakMap()],
    ["typed array", new Uint8Array([1, 2, 3])],
    ["boxed string", Object("boxed")],
    ["boxed bigint", Object(7n)],
    ["a promise", Promise.resolve(1)],
    // biome-ignore lint/suspicious/noThenProperty: a thenable is one of the odd values a tool may throw
    ["a thenable", { then: (resolve: (v: number) => void) => resolve(1) }],
    ["object named like an error", { name: "TimeoutError", message: "too slow" }],
  ];
}

function sampledValues(): [string, unknown][] {
  const key = fc.oneof(
    fc.constantFrom("message", "name", "toString", "valueOf", "toJSON", "constructor", "errors", "cause", "then"),
    fc.string(),
  );
  const anything = fc.anything({
    key,
    maxDepth: 3,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
    withUnicodeString: true,
  });
  return fc.sample(anything, { seed: 20_260_115, numRuns: 50 }).map((v, i) => [`fc.anything #${i}`, v]);
}

const values: [string, unknown][] = [...fixedValues(), ...sampledValues()];

const flaky = tool(
  async ({ i }: { i: number }) => {
    throw values[i]?.[1];
  },
  { name: TOOL, description: "Throws the i-th odd value", schema: z.object({ i: z.number() }) },
);

const aiCall = (i: number) =>
  new AIMessage({ content: "", tool_calls: [{ name: TOOL, args: { i }, id: `call_${i}`, type: "tool_call" }] });

type Answer = { message: ToolMessage } | { crashed: unknown };

async function plainToolNode(i: number): Promise<Answer> {
  try {
    const out = (await new ToolNode([flaky]).invoke({ messages: [aiCall(i)] })) as { messages: ToolMessage[] };
    return { message: out.messages[0] as ToolMessage };
  } catch (crashed) {
    return { crashed };
  }
}

/** The node's input (and, loosely, its update). */
type NodeIO = { messages: BaseMessage[]; toolGuard?: ToolGuardState };
const guarded = new GuardedToolNode<NodeIO>([flaky]);

async function guardedToolNode(i: number): Promise<ToolMessage> {
  const out = await guarded.invoke({ messages: [aiCall(i)], toolGuard: emptyToolGuardState() });
  return out.messages[0] as ToolMessage;
}

/** The value's `message` when it is a readable, non-empty string. */
function readableMessage(value: unknown): string | undefined {
  try {
    const message = (value as { message?: unknown }).message;
    return typeof message === "string" && message.trim() !== "" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `value instanceof …` throws (a Proxy with a throwing getPrototypeOf trap, a revoked Proxy). */
function instanceofThrows(value: unknown): boolean {
  try {
    return value instanceof Error && false;
  } catch {
    return true;
  }
}

/** An error ToolMessage that answers call `i`, says something, and names the tool. */
function expectGoodAnswer(message: ToolMessage, i: number) {
  expect(ToolMessage.isInstance(message)).toBe(true);
  expect(message.status).toBe("error");
  expect(message.tool_call_id).toBe(`call_${i}`);
  expect(message.name).toBe(TOOL);
  expect(typeof message.content).toBe("string");
  expect((message.content as string).trim()).not.toBe("");
}

describe("odd thrown values", () => {
  it(`covers 80+ values (${values.length})`, () => {
    expect(values.length).toBeGreaterThanOrEqual(80);
  });

  it("describeThrown renders every value without throwing, within its length cap", () => {
    for (const [label, value] of values) {
      const text = describeThrown(value);
      expect(typeof text, label).toBe("string");
      expect(text.length, label).toBeGreaterThan(0);
      expect(text.length, label).toBeLessThanOrEqual(500);
      expect(describeThrown(value, 20).length, label).toBeLessThanOrEqual(20);
    }
    expect(describeThrown(undefined)).toBe("undefined");
    expect(describeThrown("boom")).toBe('"boom"');
    expect(describeThrown(new TypeError("bad"))).toBe("TypeError: bad");
    expect(describeThrown(new AggregateError([new Error("a"), 1], "two"))).toBe("AggregateError: two [Error: a; 1]");
    expect(describeThrown(new MessagelessError())).toBe("Error (its message cannot be read)");
    expect(describeThrown(fixedValues().find(([l]) => l === "circular object")?.[1])).toBe(
      "<ref *1> { a: 1, self: [Circular *1] }",
    );
  });

  it("GuardedToolNode answers as ToolNode does, or better, and never crashes", { timeout: 30_000 }, async () => {
    let same = 0;
    const better: string[] = [];
    for (const [i, [label, value]] of values.entries()) {
      const plain = await plainToolNode(i);
      const ours = await guardedToolNode(i);
      expectGoodAnswer(ours, i);
      expect(ours.content, label).toBe(toolErrorContent(TOOL, value));
      if ("message" in plain && plain.message.content === ours.content) {
        same += 1;
        continue;
      }
      if ("crashed" in plain && ours.content === `Error: ${readableMessage(value)}\n Please fix your mistakes.`) {
        // ToolNode meant this (its own template on the value's message) but crashed on the way (e.g. reading a
        // throwing `name` getter to look for an interrupt).
        same += 1;
        continue;
      }
      // Ours differs from ToolNode's (which wrote `Error: undefined`, an empty message, or crashed): better means
      // it names the tool and shows the value.
      expect(ours.content as string, label).toContain(`"${TOOL}"`);
      expect(ours.content as string, label).toContain(describeThrown(value).slice(0, 40));
      if ("message" in plain) expect(plain.message.status).toBe("error");
      better.push(label);
    }
    expect(same + better.length).toBe(values.length);
    // Every value with a readable non-empty string message keeps ToolNode's exact content.
    for (const label of ["Error", "TypeError", "AggregateError", "frozen Error", "object with a string message"]) {
      expect(better, label).not.toContain(label);
    }
    for (const label of ["undefined", "null", "string", "Proxy with throwing traps", "revoked Proxy", "symbol"]) {
      expect(better, label).toContain(label);
    }
  });

  it("guardMiddleware in createAgent answers every call with an error ToolMessage", { timeout: 30_000 }, async () => {
    const model = new ScriptedChatModel((messages: BaseMessage[]) => {
      const last = messages.at(-1);
      if (last?.getType() !== "human") return "Done.";
      const i = Number(last.content);
      return { toolCalls: [{ name: TOOL, args: { i }, id: `call_${i}` }] };
    });
    const agent = createAgent({ model, tools: [flaky], middleware: [guardMiddleware()] });
    for (const [i, [label, value]] of values.entries()) {
      const out = await agent.invoke({ messages: [new HumanMessage(String(i))] });
      const answers = (out.messages as BaseMessage[]).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
      expect(answers, label).toHaveLength(1);
      const answer = answers[0] as ToolMessage;
      expectGoodAnswer(answer, i);
      // langchain's tool node checks `instanceof ToolInputParsingException` before the middleware sees the value:
      // on a Proxy whose getPrototypeOf trap throws, what reaches the middleware is the trap's error.
      if (!instanceofThrows(value)) expect(answer.content, label).toBe(toolErrorContent(TOOL, value));
      expect((out.messages as BaseMessage[]).at(-1)?.content, label).toBe("Done.");
    }
  });

  it("with handleToolErrors false, the value is thrown as it is, as ToolNode does", async () => {
    const i = values.findIndex(([label]) => label === "string");
    const node = new GuardedToolNode<NodeIO>([flaky], { handleToolErrors: false });
    expect(node.handleToolErrors).toBe(false);
    expect(guarded.handleToolErrors).toBe(true);
    const input = { messages: [aiCall(i)], toolGuard: emptyToolGuardState() };
    await expect(node.invoke(input)).rejects.toBe("rate limited");
    await expect(new ToolNode([flaky], { handleToolErrors: false }).invoke(input)).rejects.toBe("rate limited");
  });
});

describe("graph interrupts still pass through", () => {
  const asking = tool(async () => interrupt("approve?"), {
    name: "ask",
    description: "Asks a person",
    schema: z.object({}),
  });
  const throwing = tool(
    async () => {
      throw new GraphInterrupt([{ value: "raw", id: "i1" }]);
    },
    { name: "raw_interrupt", description: "Throws a GraphInterrupt", schema: z.object({}) },
  );
  const askOnce = (name: string) =>
    new ScriptedChatModel((messages: BaseMessage[]) =>
      messages.at(-1)?.getType() === "human" ? { toolCalls: [{ name, args: {}, id: "c1" }] } : "Done.",
    );

  it("GuardedToolNode re-throws a GraphInterrupt", async () => {
    const node = new GuardedToolNode<NodeIO>([throwing]);
    const ai = new AIMessage({ content: "", tool_calls: [{ name: "raw_interrupt", args: {}, id: "c1" }] });
    const error = await node.invoke({ messages: [ai], toolGuard: emptyToolGuardState() }).catch((e: unknown) => e);
    expect(isGraphInterrupt(error)).toBe(true);
  });

  it("interrupt() in a tool interrupts createReactAgent with GuardedToolNode, and createAgent with guardMiddleware", async () => {
    const input = { messages: [new HumanMessage("go")] };
    const react = createReactAgent({
      llm: askOnce("ask"),
      tools: new GuardedToolNode([asking]),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const a = await react.invoke(input, { configurable: { thread_id: "react" } });
    expect(isInterrupted(a)).toBe(true);
    const agent = createAgent({
      model: askOnce("ask"),
      tools: [asking],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    });
    const b = await agent.invoke(input, { configurable: { thread_id: "agent" } });
    expect(isInterrupted(b)).toBe(true);
  });
});
