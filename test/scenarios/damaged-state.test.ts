/**
 * Issue 35, item 14, through both agent adapters: a checkpoint whose guard channel is damaged makes the next turn fail
 * with a GuardStateError that names the channel (not a bare TypeError), `updateState(config, { <channel>: null })`
 * resets it and the thread goes on; an update a channel's reducer does not know is refused. createReactAgent
 * (GuardedToolNode, escalationHook, loopDetectHook) and createAgent (guardMiddleware, loopDetectMiddleware) on
 * MemorySaver, each with every damage; a custom StateGraph over GuardState for the refused updates (the file cache
 * included). The reducers themselves are in test/core/damaged-state.test.ts.
 */
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  GuardMessagesState,
  GuardState,
  GuardStateError,
  guardHooks,
  loopDetectHook,
} from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { damage } from "../support/damage.js";

const readFile = () =>
  tool(async ({ path }: { path: string }) => `content of ${path}`, {
    name: "read_file",
    description: "Reads a file.",
    schema: z.object({ path: z.string() }),
  });

/** Reads the files the person names: the same name twice in one message is a repeat (blocked, a guard event). */
const reader = () =>
  new ScriptedChatModel((messages) => {
    const last = messages.at(-1);
    if (last?.getType() !== "human") return "Done.";
    return {
      toolCalls: String(last.content)
        .split(" ")
        .map((path) => ({ name: "read_file", args: { path } })),
    };
  });

interface Thread {
  invoke: (input: ReturnType<typeof ask>, config: object) => Promise<{ messages: { content: unknown }[] }>;
  updateState: (config: object, values: Record<string, unknown>) => Promise<unknown>;
}

/** An agent adapter: its agent on a saver, and the GuardStateError in what its failed turn threw. */
interface AgentAdapter {
  build: (saver: MemorySaver) => Thread;
  stateError: (thrown: unknown) => unknown;
}

const AGENTS = {
  createReactAgent: {
    build: (saver) => {
      const node = new GuardedToolNode([readFile()]);
      return createReactAgent({
        llm: reader(),
        tools: node,
        stateSchema: GuardMessagesState,
        postModelHook: guardHooks(escalationHook(node), loopDetectHook()),
        checkpointer: saver,
      });
    },
    // The graph throws the GuardStateError itself.
    stateError: (thrown) => thrown,
  },
  createAgent: {
    build: (saver) =>
      createAgent({
        model: reader(),
        tools: [readFile()],
        middleware: [guardMiddleware(), loopDetectMiddleware()],
        checkpointer: saver,
      }),
    // langchain hands on what a middleware's wrapModelCall throws (the loop guard) as a MiddlewareError, the
    // GuardStateError its `cause` (wrapped once more by each middleware's wrapModelCall around it).
    stateError: (thrown) => {
      let error = thrown;
      while (error !== undefined && !(error instanceof GuardStateError)) error = (error as { cause?: unknown }).cause;
      return error;
    },
  },
} satisfies Record<string, AgentAdapter>;

const ask = (content: string) => ({ messages: [{ role: "user", content }] });

/** What `run` rejected with (undefined when it resolved). */
const thrownBy = (run: Promise<unknown>): Promise<unknown> =>
  run.then(
    () => undefined,
    (e: unknown) => e,
  );

type Edit = (value: Record<string, unknown>) => void;

/** The damages: a channel, what is wrong with it, the edit. */
const DAMAGES: [string, string, Edit][] = [
  [
    "toolGuard",
    "stats.allowed a string",
    (v) => {
      (v.stats as Record<string, unknown>).allowed = "many";
    },
  ],
  [
    "toolGuard",
    "repetition.window an object",
    (v) => {
      (v.repetition as Record<string, unknown>).window = {};
    },
  ],
  [
    "toolGuard",
    "repetition null",
    (v) => {
      v.repetition = null;
    },
  ],
  [
    "toolGuard",
    "stats and escalation missing (no release stored another shape)",
    (v) => {
      delete v.stats;
      delete v.escalation;
    },
  ],
  [
    "loopGuard",
    "tokens missing",
    (v) => {
      delete v.tokens;
    },
  ],
  [
    "loopGuard",
    "iterations a string",
    (v) => {
      v.iterations = "3";
    },
  ],
  [
    "loopGuard",
    "tokens a string",
    (v) => {
      v.tokens = "lots";
    },
  ],
  [
    "guardLog",
    "recent a number",
    (v) => {
      v.recent = 5;
    },
  ],
  [
    "guardLog",
    "counts an array",
    (v) => {
      v.counts = [1];
    },
  ],
];

describe.each(Object.keys(AGENTS) as (keyof typeof AGENTS)[])(
  "a damaged guard channel in a checkpoint (%s)",
  (adapter) => {
    const { build, stateError } = AGENTS[adapter];
    it.each(DAMAGES)(
      "%s (%s): the next turn names the channel; null resets it and the thread goes on",
      async (channel, _what, edit) => {
        const saver = new MemorySaver();
        const graph = build(saver);
        const config = { configurable: { thread_id: `damaged-${channel}` } };
        await graph.invoke(ask("a.txt"), config);
        await damage(saver, config, channel, edit);
        const thrown = await thrownBy(graph.invoke(ask("a.txt a.txt"), config)); // a repeat: the guards write an event
        const error = stateError(thrown);
        expect(error).toBeInstanceOf(GuardStateError);
        expect((error as GuardStateError).channel).toBe(channel);
        expect((error as GuardStateError).message).toContain(`updateState(config, { ${channel}: null })`);
        await graph.updateState(config, { [channel]: null });
        const after = await graph.invoke(ask("b.txt"), config);
        expect(after.messages.at(-1)?.content).toBe("Done.");
      },
    );
  },
);

describe("an update a guard channel's reducer does not know", () => {
  it.each([
    ["fileCache", { op: "bogus" }],
    ["toolGuard", { nope: true }],
    ["loopGuard", 7],
    ["guardLog", [{ nope: 1 }]],
  ] as const)("%s: refused with a GuardStateError, never applied", async (channel, update) => {
    const graph = new StateGraph(GuardState)
      .addNode("writes", () => ({ [channel]: update }) as never)
      .addEdge(START, "writes")
      .addEdge("writes", END)
      .compile();
    const error = await thrownBy(graph.invoke({}));
    expect(error).toBeInstanceOf(GuardStateError);
    expect((error as GuardStateError).channel).toBe(channel);
    expect((error as GuardStateError).update).toBe(true);
  });
});
