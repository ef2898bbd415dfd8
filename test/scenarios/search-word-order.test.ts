/**
 * Issue 63, "Why 6" (c): a search's word order is not its identity. The same web search asked 5 times with its words
 * shuffled (and its case changed), answering the same page each time, is the same search asked 5 times: the 2nd gets
 * the "Unchanged" note, the 3rd is blocked (browser-use only nudges at the 5th; ours is earlier because the answer
 * was identical). `tools.<name>.queryWords: false` compares the question as written; a tool not named as a search,
 * and a quoted phrase, keep their order. Through createReactAgent, createAgent and `replayGuards`.
 */
import { describe, expect, it } from "vitest";
import { callIdentity } from "../../src/common/identity/classify.js";
import { ADAPTERS, runScenario, same, step } from "./support.js";

const SHUFFLED = [
  "langgraph guards install middleware",
  "install langgraph guards middleware",
  "middleware guards install langgraph",
  "Install LangGraph guards middleware",
  "guards  middleware langgraph install",
];
const PAGE = `langgraph-guards: install with npm i langgraph-guards, then add guardMiddleware() to createAgent. ${"Docs. ".repeat(60)}`;
const searches = SHUFFLED.map((query) => step("web_search", { query }));

const keyOf = (tool: string, args: Record<string, unknown>, queryWords?: boolean) =>
  callIdentity(tool, args, { tools: queryWords === undefined ? {} : { [tool]: { queryWords } } }).key;

describe("a search's identity", () => {
  it("is its question's words, lower-cased, in any order", () => {
    for (const query of SHUFFLED)
      expect(keyOf("web_search", { query })).toBe(keyOf("web_search", { query: SHUFFLED[0] }));
    for (const arg of ["q", "search", "search_query", "question"])
      expect(keyOf("search_docs", { [arg]: "b a", k: 3 })).toBe(keyOf("search_docs", { [arg]: "A b", k: 3 }));
  });

  it("keeps the order as written for queryWords: false, a quoted phrase, and a tool not named as a search", () => {
    expect(keyOf("web_search", { query: "b a" }, false)).not.toBe(keyOf("web_search", { query: "a b" }, false));
    expect(keyOf("web_search", { query: '"b a"' })).not.toBe(keyOf("web_search", { query: '"a b"' }));
    expect(keyOf("translate", { q: "b a" })).not.toBe(keyOf("translate", { q: "a b" }));
    // Other arguments of a search are compared as written.
    expect(keyOf("web_search", { query: "a", site: "b a" })).not.toBe(keyOf("web_search", { query: "a", site: "a b" }));
  });
});

describe.each(ADAPTERS)("the same search with its words shuffled, through %s", (adapter) => {
  it("asked 5 times with the same page: the 2nd is noted unchanged, the 3rd is blocked, the 5th stops", async () => {
    const r = await runScenario(adapter, [same("web_search", PAGE)], searches);
    // As the identical search asked 5 times: then a 2nd block, and the run stops at the 5th.
    expect(r.outcomes).toEqual(["ran", "ran", "consecutive@1", "consecutive@2", "stop"]);
    expect(r.ran.web_search).toBe(2);
    expect(r.answers[1]).toMatch(/^Unchanged: exactly the same result/);
  });

  it("with queryWords: false, every reworded search runs", async () => {
    const r = await runScenario(adapter, [same("web_search", PAGE)], searches, {
      tools: { web_search: { queryWords: false } },
    });
    expect(r.outcomes).toEqual(["ran", "ran", "ran", "ran", "ran"]);
  });
});
