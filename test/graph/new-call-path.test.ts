/**
 * `GuardedToolNode` answers the usual turn (the last message an AI message with one call that the core's shortcut
 * proves new) without building a plan (the path is the agent layer's GuardedTurn, under every adapter). That path must give exactly the update of the full procedure: here two nodes
 * with the same tools, one of them kept on the full procedure, answer the same states turn after turn (random
 * conversations: repeats, writes, failures, Commands, result dedupe, new runs, several calls at once, guards off for
 * a turn, observe mode), and their updates (answers and `toolGuard` events) or their errors must be equal.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { reduceToolGuard } from "../../src/core/index.js";
import { GuardedToolNode, type GuardedToolNodeOptions, type ToolGuardState } from "../../src/index.js";
import { GuardedTurn } from "../../src/tool-calls/turn.js";

/** A tool set over one in-memory project (each node gets its own, so that both see the same files). */
function makeTools() {
  const files = new Map<string, string>([
    ["a.py", "A = 1\n"],
    ["b.py", "B = 2\n"],
  ]);
  return [
    tool(({ path }) => files.get(path) ?? `Error: ${path} not found`, {
      name: "read_file",
      description: "Reads a file.",
      schema: z.object({ path: z.string() }),
    }),
    tool(
      ({ path, content }) => {
        files.set(path, content);
        return `wrote ${path}`;
      },
      {
        name: "write_to_file",
        description: "Writes a file.",
        schema: z.object({ path: z.string(), content: z.string() }),
      },
    ),
    // Not read-only by its name: a repeat far enough back is answered by result dedupe, not blocked.
    tool(({ query }) => `results for ${query}: ${"x".repeat(200)}`, {
      name: "web_search",
      description: "Searches.",
      schema: z.object({ query: z.string() }),
    }),
    tool(
      (): string => {
        throw new Error("this tool always fails");
      },
      { name: "fail_always", description: "Always throws.", schema: z.object({ n: z.number() }) },
    ),
    tool(
      ({ note }, config) =>
        new Command({
          update: {
            messages: [
              new ToolMessage({ content: `noted ${note}`, tool_call_id: config.toolCall?.id ?? "", name: "take_note" }),
            ],
          },
        }),
      { name: "take_note", description: "Returns a Command.", schema: z.object({ note: z.string() }) },
    ),
  ];
}

type Call = { name: string; args: Record<string, unknown> };
type Step = { kind: "calls"; calls: Call[]; guardsOff: boolean } | { kind: "person"; text: string };

const callArb: fc.Arbitrary<Call> = fc.oneof(
  fc.constantFrom("a.py", "b.py", "c.py").map((path) => ({ name: "read_file", args: { path } })),
  fc
    .tuple(fc.constantFrom("a.py", "c.py"), fc.constantFrom("1", "2"))
    .map(([path, content]) => ({ name: "write_to_file", args: { path, content } })),
  fc.constantFrom("cats", "dogs").map((query) => ({ name: "web_search", args: { query } })),
  fc.constantFrom(1, 2).map((n) => ({ name: "fail_always", args: { n } })),
  fc.constantFrom("x", "y").map((note) => ({ name: "take_note", args: { note } })),
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("calls" as const),
      calls: fc.array(callArb, { minLength: 1, maxLength: 1 }),
      guardsOff: fc.constant(false),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("calls" as const),
      calls: fc.array(callArb, { minLength: 2, maxLength: 3 }),
      guardsOff: fc.constant(false),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("calls" as const),
      calls: fc.array(callArb, { minLength: 1, maxLength: 1 }),
      guardsOff: fc.constant(true),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("person" as const), text: fc.constantFrom("go on", "next") }) },
);

/** What an answer says, without the ids LangChain draws at random. */
function plain(value: unknown): unknown {
  if (ToolMessage.isInstance(value)) {
    const { content, tool_call_id, name, status, artifact } = value;
    return { content, tool_call_id, name, status, artifact };
  }
  if (value instanceof Command) return { command: plain((value.update as { messages?: unknown })?.messages) };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

/** The messages an update adds (a list of updates and Commands, or one update). */
function addedMessages(update: unknown): BaseMessage[] {
  const parts = Array.isArray(update) ? update : [update];
  return parts.flatMap((part) => {
    const body = part instanceof Command ? part.update : part;
    const messages = (body as { messages?: BaseMessage[] } | undefined)?.messages;
    return Array.isArray(messages) ? messages : [];
  });
}

function addedEvents(update: unknown): unknown[] {
  const parts = Array.isArray(update) ? update : [update];
  return parts.flatMap((part) =>
    part instanceof Command ? [] : ((part as { toolGuard?: unknown[] }).toolGuard ?? []),
  );
}

/** A node's update for a state, or the error it threw. */
async function outcome(node: GuardedToolNode<unknown>, state: unknown, guardsOff: boolean) {
  try {
    return { update: await node.invoke(state, { configurable: { guards: !guardsOff } }) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const OPTION_SETS: GuardedToolNodeOptions[] = [{}, { mode: "observe" }, { repetitionThreshold: 2, windowSize: 4 }];

describe("GuardedToolNode: the path for one new call gives the full procedure's update", () => {
  // Blocks record when they happened: both nodes must read the same clock.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_700_000_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(OPTION_SETS)("options %j", async (options) => {
    let quickTurns = 0;
    const original = Reflect.get(GuardedTurn, "newCall");
    await fc
      .assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
          const quick = new GuardedToolNode<unknown>(makeTools(), options);
          const full = new GuardedToolNode<unknown>(makeTools(), options);
          // The path lives in the agent layer's turn (GuardedTurn.newCall), under every adapter: the reference node
          // runs with it taken away, so every turn of it is planned by the full procedure; the turns the node under
          // test answers by the path are counted.
          const newCall = original as (...args: unknown[]) => unknown;
          expect(newCall).toBeTypeOf("function"); // the override below must replace the path
          let reference = false;
          const counted = (...args: unknown[]) => {
            if (reference) return undefined;
            const turn = newCall.apply(GuardedTurn, args);
            if (turn !== undefined) quickTurns += 1;
            return turn;
          };
          Object.defineProperty(GuardedTurn, "newCall", { value: counted, configurable: true, writable: true });
          const outcomeOf = async (node: GuardedToolNode<unknown>, state: unknown, guardsOff: boolean) => {
            reference = node === full;
            try {
              return await outcome(node, state, guardsOff);
            } finally {
              reference = false;
            }
          };
          let messages: BaseMessage[] = [new HumanMessage({ id: "h0", content: "start" })];
          let toolGuard: ToolGuardState = reduceToolGuard(undefined, []);
          let turn = 0;
          for (const step of steps) {
            turn += 1;
            if (step.kind === "person") {
              messages = [...messages, new HumanMessage({ id: `h${turn}`, content: step.text })];
              continue;
            }
            const calls = step.calls.map((c, i) => ({ ...c, id: `call_${turn}_${i}`, type: "tool_call" as const }));
            messages = [...messages, new AIMessage({ id: `ai${turn}`, content: "", tool_calls: calls })];
            const state = { messages, toolGuard };
            const a = await outcomeOf(quick, state, step.guardsOff);
            const b = await outcomeOf(full, state, step.guardsOff);
            expect(plain(a)).toEqual(plain(b));
            if (a.update === undefined) return; // both stopped the run alike
            messages = [...messages, ...addedMessages(a.update)];
            toolGuard = reduceToolGuard(toolGuard, addedEvents(a.update) as never);
          }
        }),
        { numRuns: 60, seed: 1_904 },
      )
      .finally(() => {
        Object.defineProperty(GuardedTurn, "newCall", { value: original, configurable: true, writable: true });
      });
    expect(quickTurns).toBeGreaterThan(100); // the path under test was exercised, not only the fallback
  });
});
