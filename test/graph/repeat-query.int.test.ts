/** Seed 002 (repeat-query guard): routing, normalization, the JSON-ish parser, validation, and a full graph. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildRetrievalGraph, loopingModel } from "../../examples/repeat-query.js";
import { normalizeQuery, parseJsonishQuery, unionQueries } from "../../src/core/index.js";
import {
  clearRetrievalQueries,
  GuardOptionsError,
  guardMessagesStateSchema,
  type RepeatQueryState,
  recordRetrievalQuery,
  repeatQueryGuard,
  repeatQueryRouter,
  withQueryHistory,
} from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-rq-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const router = repeatQueryRouter({ on_ok: "search_auto", on_repeat: "suff_loop_guard" });

describe("seed 002 examples", () => {
  it("A: a new query goes on_ok", () => {
    const state = {
      lastModelResponse: "class PaymentService definition",
      retrievalQueriesAskedNorm: ["class orderservice definition"],
    };
    expect(router(state)).toBe("search_auto");
  });

  it("B: a repeat after normalization goes on_repeat", () => {
    const state = {
      lastModelResponse: "  CLASS   PaymentService   definition ",
      retrievalQueriesAskedNorm: ["class paymentservice definition"],
    };
    expect(router(state)).toBe("suff_loop_guard");
  });

  it("C: an empty query goes on_repeat", () => {
    expect(router({ lastModelResponse: "", retrievalQueriesAskedNorm: [] })).toBe("suff_loop_guard");
    expect(router({ lastModelResponse: " \u00a0\n\t" })).toBe("suff_loop_guard");
  });

  it("the same examples through the JSON-ish parser", () => {
    const jsonish = repeatQueryRouter({ query_parser: "JsonishQueryParser", on_ok: "ok", on_repeat: "repeat" });
    const asked = ["class orderservice definition"];
    expect(
      jsonish({ lastModelResponse: '{"query": "class PaymentService definition"}', retrievalQueriesAskedNorm: asked }),
    ).toBe("ok");
    expect(
      jsonish({ lastModelResponse: '{"query": "  CLASS  OrderService definition"}', retrievalQueriesAskedNorm: asked }),
    ).toBe("repeat");
    expect(jsonish({ lastModelResponse: '{"query": ""}', retrievalQueriesAskedNorm: [] })).toBe("repeat");
  });
});

describe("normalization and history", () => {
  it('" class   Foo " and "CLASS foo" are one query, Unicode whitespace and case included', () => {
    expect(normalizeQuery(" class   Foo ")).toBe(normalizeQuery("CLASS foo"));
    expect(normalizeQuery("\u3000ÉCOLE\u00a0\u2003Straße\u2028")).toBe("école straße");
  });

  it("a query asked only by the router is still new next time; after recordRetrievalQuery it is a repeat", () => {
    const state = { lastModelResponse: "class Foo", retrievalQueriesAskedNorm: [] as string[] };
    expect(router(state)).toBe("search_auto");
    expect(state.retrievalQueriesAskedNorm).toEqual([]); // the router never writes
    expect(router(state)).toBe("search_auto");
    const update = recordRetrievalQuery(" CLASS   foo ");
    expect(update).toEqual({ retrievalQueriesAskedNorm: ["class foo"] });
    const after = {
      ...state,
      retrievalQueriesAskedNorm: unionQueries(state.retrievalQueriesAskedNorm, update.retrievalQueriesAskedNorm),
    };
    expect(router(after)).toBe("suff_loop_guard");
  });

  it("the asked set is a set: union, first-asked order, normalized, empty queries ignored", () => {
    expect(unionQueries(["a"], ["B ", "a", "  ", "c"])).toEqual(["a", "b", "c"]);
    expect(recordRetrievalQuery("   ")).toEqual({ retrievalQueriesAskedNorm: [] });
  });

  it("reads the last AI message when lastModelResponse is not set, and getQuery overrides both", () => {
    const messages = [new AIMessage("first"), new AIMessage("class Foo")];
    expect(router.queryOf({ messages })).toBe("class Foo");
    expect(router.queryOf({ messages, lastModelResponse: "from channel" })).toBe("from channel");
    const custom = repeatQueryRouter<{ topic: string } & RepeatQueryState>({
      on_ok: "a",
      on_repeat: "b",
      getQuery: (s) => s.topic,
    });
    expect(custom.queryOf({ topic: "x", messages } as never)).toBe("x");
  });
});

describe("the JSON-ish parser", () => {
  it.each([
    ["strict JSON", '{"query": "class Foo"}'],
    ["a code fence", '```json\n{"query": "class Foo"}\n```'],
    ["prose around", 'Sure! I will search: {"query": "class Foo"} and then answer.'],
    ["a fence inside prose", 'Plan:\n```json\n{\n  "action": "retrieve",\n  "query": "class Foo"\n}\n```\nDone.'],
    ["single quotes", "{'query': 'class Foo'}"],
    ["trailing commas", '{"query": "class Foo", "k": [1, 2,],}'],
    ["unquoted keys", '{query: "class Foo"}'],
    ["a quoted bare string", '"class Foo"'],
    ["a bare string", "class Foo"],
  ])("extracts the query from %s", (_form, payload) => {
    expect(parseJsonishQuery(payload)).toBe("class Foo");
  });

  it.each([
    ["an object without query", '{"action": "retrieve"}'],
    ["an empty string", ""],
    ["a broken object", "{"],
    ["braces without a query", "Looking at {x} and {y}"],
    ["a non-string", 42],
  ])("gives an empty query (so on_repeat) for %s", (_form, payload) => {
    expect(parseJsonishQuery(payload)).toBe("");
  });

  it("without a parser the raw payload is the query", () => {
    expect(router.queryOf({ lastModelResponse: '{"query": "x"}' })).toBe('{"query": "x"}');
  });
});

describe("validation when the guard is built", () => {
  it.each([
    ["a missing on_ok", { on_repeat: "b" }, /on_ok/],
    ["an empty on_repeat", { on_ok: "a", on_repeat: "" }, /on_repeat/],
    [
      "an unknown parser",
      { on_ok: "a", on_repeat: "b", query_parser: "YamlParser" },
      /query_parser.*JsonishQueryParser, jsonish_v1/s,
    ],
  ])("throws for %s", (_what, options, message) => {
    expect(() => repeatQueryRouter(options as never)).toThrow(GuardOptionsError);
    expect(() => repeatQueryRouter(options as never)).toThrow(message);
    expect(() => repeatQueryGuard(options as never)).toThrow(message);
  });

  it("accepts both parser names", () => {
    expect(() => repeatQueryRouter({ on_ok: "a", on_repeat: "b", query_parser: "jsonish_v1" })).not.toThrow();
    expect(() => repeatQueryRouter({ on_ok: "a", on_repeat: "b", query_parser: "JsonishQueryParser" })).not.toThrow();
  });
});

describe("a full graph: decision → guard → search → decision", () => {
  it("a model that keeps asking the same query ends in on_repeat after one retrieval", async () => {
    const graph = buildRetrievalGraph(loopingModel());
    const config = { configurable: { thread_id: "loop" } };
    const out = await graph.invoke({ messages: [{ role: "user", content: "Where is PaymentService?" }] }, config);
    expect(out.retrievals).toBe(1);
    expect(String(out.messages.at(-1)?.content)).toMatch(/^Not sure\./); // the on_repeat branch
    const saved = await graph.getState(config);
    expect(saved.values.retrievalQueriesAskedNorm).toEqual(["class paymentservice definition"]);
  });

  it("the guard node really decides the repeat (its update is in the run), and can hint the model", async () => {
    const graph = buildRetrievalGraph(loopingModel(), { hint: true });
    const updates: string[] = [];
    for await (const chunk of await graph.stream(
      { messages: [{ role: "user", content: "q" }] },
      { configurable: { thread_id: "h" }, streamMode: "updates" },
    )) {
      updates.push(...Object.keys(chunk));
    }
    expect(updates).toEqual([
      "decide",
      "guard_repeat_query",
      "search",
      "decide",
      "guard_repeat_query",
      "answer_not_sure",
    ]);
    const state = await graph.getState({ configurable: { thread_id: "h" } });
    expect(state.values.repeatQueryHint).toContain('Queries already run: "class paymentservice definition"');
  });

  it("drawMermaid shows both labelled edges", () => {
    const mermaid = buildRetrievalGraph(loopingModel()).getGraph().drawMermaid();
    expect(mermaid).toMatch(/guard_repeat_query -\. +&nbsp;on_ok&nbsp; +\.-> search;/);
    expect(mermaid).toMatch(/guard_repeat_query -\. +&nbsp;on_repeat&nbsp; +\.-> answer_not_sure;/);
  });

  it("the asked set survives a restart: a new process with SqliteSaver reads it and routes on_repeat", async () => {
    const db = join(dir, "retrieval.sqlite");
    const graph = buildRetrievalGraph(loopingModel(), { checkpointer: SqliteSaver.fromConnString(db) });
    await graph.invoke({ messages: [{ role: "user", content: "Where?" }] }, { configurable: { thread_id: "t" } });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "test/fixtures/retrieval-turn.ts", db, "t"], {
      cwd: join(import.meta.dirname, "..", ".."),
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim());
    expect(result.askedBefore).toEqual(["class paymentservice definition"]);
    expect(result.retrievalsAfter).toBe(result.retrievalsBefore); // no second retrieval
    expect(result.last).toMatch(/^Not sure\./);
  });

  it("clearRetrievalQueries forgets the asked set (a new pipeline run on the same thread)", async () => {
    const State = z.object({ ...guardMessagesStateSchema.shape });
    const graph = new StateGraph(State)
      .addNode("record", () => recordRetrievalQuery("q"))
      .addNode("clear", () => clearRetrievalQueries())
      .addEdge(START, "record")
      .addEdge("record", "clear")
      .addEdge("clear", END)
      .compile();
    expect((await graph.invoke({ messages: [] })).retrievalQueriesAskedNorm).toEqual([]);
  });
});

describe("state forms and node wrappers", () => {
  it("works in a zod-declared graph: router as a plain conditional edge, withQueryHistory on the search node", async () => {
    const State = z.object({
      ...guardMessagesStateSchema.shape,
      lastModelResponse: z.string().optional(),
    });
    type S = z.infer<typeof State>;
    const llm = new ScriptedChatModel([
      '{"query": "Foo"}',
      "{'query': ' FOO '}",
      '{"query": "bar"}',
      '{"query": "bar "}',
    ]);
    const guard = repeatQueryRouter<S>({ query_parser: "jsonish_v1", on_ok: "search", on_repeat: "done" });
    let searches = 0;
    const graph = new StateGraph(State)
      .addNode("decide", async (s: S) => {
        const r = await llm.invoke(s.messages);
        return { messages: [r], lastModelResponse: String(r.content) };
      })
      .addNode(
        "search",
        withQueryHistory(async () => {
          searches += 1;
          return {};
        }, guard.queryOf),
      )
      .addNode("done", () => ({}))
      .addEdge(START, "decide")
      .addConditionalEdges("decide", guard, ["search", "done"])
      .addEdge("search", "decide")
      .addEdge("done", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "z" } };
    const first = await graph.invoke({ messages: [{ role: "user", content: "go" }] }, config);
    expect(searches).toBe(1);
    expect(first.retrievalQueriesAskedNorm).toEqual(["foo"]);
    const second = await graph.invoke({ messages: [{ role: "user", content: "more" }] }, config);
    expect(searches).toBe(2);
    expect(second.retrievalQueriesAskedNorm).toEqual(["foo", "bar"]);
  });

  it("withQueryHistory records after the node returns, also from a Command, and not when it throws", async () => {
    const getQuery = () => "Q";
    const plain = withQueryHistory(async () => ({ x: 1 }), getQuery);
    expect(await plain({}, undefined)).toEqual({ x: 1, retrievalQueriesAskedNorm: ["q"] });
    const command = withQueryHistory(async () => new Command({ goto: "next", update: { x: 2 } }), getQuery);
    const result = await command({}, undefined);
    expect(result).toBeInstanceOf(Command);
    expect((result as Command).update).toEqual({ x: 2, retrievalQueriesAskedNorm: ["q"] });
    expect((result as Command).goto).toEqual(["next"]);
    const failing = withQueryHistory(async () => {
      throw new Error("index down");
    }, getQuery);
    await expect(failing({}, undefined)).rejects.toThrow("index down");
  });
});
