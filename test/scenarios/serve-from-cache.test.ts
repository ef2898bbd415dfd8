/**
 * Issue 46, item 6: a repeat of a read-only, idempotent tool is served from the result cache. A `search_docs` whose
 * metadata carries MCP's `readOnlyHint` and `idempotentHint`, asked the same question 5 times in a run, runs once;
 * the other 4 are answered with its result as normal tool answers: no block, no strike. A write in between makes the
 * next call run; so does a new run, a result no longer in the conversation, a changed argument. Volatile arguments
 * (`ignoreArgs`) do not count. The repeat ceiling still ends a loop of served calls. Through createReactAgent with
 * `GuardedToolNode`, createAgent with `guardMiddleware` and `replayGuards`, which decide alike.
 */
import { describe, expect, it } from "vitest";
import {
  ADAPTERS,
  type FakeTool,
  runScenario,
  runThread,
  type ScenarioResult,
  same,
  sequence,
  step,
  times,
} from "./support.js";

const HINTS = { readOnlyHint: true, idempotentHint: true };
const DOCS = "Install with `npm i langgraph-guards`, then add guardMiddleware() to createAgent.";
/** A documentation search that answers something new each time it really runs (so a served answer shows). */
const searchDocs = (metadata: Record<string, unknown> | undefined = HINTS): FakeTool => ({
  ...sequence("search_docs", [DOCS, `${DOCS} (second run)`, `${DOCS} (third run)`, `${DOCS} (fourth run)`]),
  metadata,
});
const ask = step("search_docs", { query: "install" });
const updateDocs = same("update_docs", "Updated.");

/** The guards' counters every adapter keeps alike. */
const counters = (r: ScenarioResult) => ({
  served: r.toolGuard.stats.served ?? 0,
  blocked: Object.values(r.toolGuard.stats.blocked).reduce((a, b) => a + b, 0),
  strikes: r.strikes,
});

describe.each(ADAPTERS)("the result cache, through %s", (adapter) => {
  it("a read-only idempotent search asked 5 times runs once: 4 served, no strike, no block", async () => {
    const r = await runScenario(adapter, [searchDocs()], times(5, ask));
    expect(r.outcomes).toEqual(["ran", "served", "served", "served", "served"]);
    expect(r.ran.search_docs).toBe(1);
    // Each served answer is the result itself, as a normal tool answer.
    expect(r.answers).toEqual(times(5, DOCS as never));
    expect(counters(r)).toEqual({ served: 4, blocked: 0, strikes: 0 });
    if (adapter !== "replayGuards") {
      expect(r.guards?.every((g) => g === undefined)).toBe(true); // no block
      expect(r.guardLog?.counts.cache).toBe(4);
      expect(r.guardLog?.counts.blocked).toBeUndefined();
    }
  });

  it("a write in between makes the next call run; the one after is served again", async () => {
    const r = await runScenario(
      adapter,
      [searchDocs(), updateDocs],
      [ask, ask, step("update_docs", { page: "install" }), ask, ask],
    );
    expect(r.outcomes).toEqual(["ran", "served", "ran", "ran", "served"]);
    expect(r.ran.search_docs).toBe(2);
    // The call after the write got the new result, and the next one is served that one.
    expect(r.answers[3]).not.toBe(DOCS);
    expect(r.answers[4]).toBe(r.answers[3]);
    expect(counters(r)).toEqual({ served: 2, blocked: 0, strikes: 0 });
  });

  it("another question runs; ignored (volatile) arguments do not make a call new", async () => {
    const r = await runScenario(
      adapter,
      [searchDocs()],
      [
        step("search_docs", { query: "install", request_id: "r1" }),
        step("search_docs", { query: "install", request_id: "r2" }),
        step("search_docs", { query: "configure", request_id: "r3" }),
      ],
      { tools: { search_docs: { ignoreArgs: ["request_id"] } } },
    );
    expect(r.outcomes).toEqual(["ran", "served", "ran"]);
  });

  it("a new run asks again (memory.acrossRuns: fresh); with acrossRuns: keep the cache serves it", async () => {
    const fresh = await runThread(adapter, [searchDocs()], [[ask, ask], [ask]]);
    expect(fresh.outcomes).toEqual(["ran", "served", "ran"]);
    const kept = await runThread(adapter, [searchDocs()], [[ask, ask], [ask]], { memory: { acrossRuns: "keep" } });
    expect(kept.outcomes).toEqual(["ran", "served", "served"]);
  });

  it("a loop of served calls still ends: the repeat ceiling reminds at the 6th and blocks the 10th", async () => {
    const r = await runScenario(adapter, [searchDocs()], times(10, ask));
    expect(r.outcomes.slice(0, 9)).toEqual(["ran", ...times(8, "served" as never)]);
    expect(r.outcomes[9]).toMatch(/^repeat_ceiling@/);
    expect(r.answers[5]).toContain(DOCS);
    expect(r.answers[5]).not.toBe(DOCS); // the reminder after the result
    expect(r.ran.search_docs).toBe(1);
  });

  it("without both hints, or switched off, a repeat is judged by the rules as before", async () => {
    const readOnly = await runScenario(adapter, [searchDocs({ readOnlyHint: true })], times(2, ask));
    expect(readOnly.outcomes).toEqual(["ran", "consecutive@1"]);
    const off = await runScenario(adapter, [searchDocs()], times(2, ask), { tools: { search_docs: { cache: false } } });
    expect(off.outcomes).toEqual(["ran", "consecutive@1"]);
    const allOff = await runScenario(adapter, [searchDocs()], times(2, ask), { memory: { cache: false } });
    expect(allOff.outcomes).toEqual(["ran", "consecutive@1"]);
  });

  it("a tool without hints is served when asked for (tools.<name>.cache), and a poll never by its hints", async () => {
    const optIn = await runScenario(adapter, [searchDocs(undefined)], times(3, ask), {
      tools: { search_docs: { cache: true } },
    });
    expect(optIn.outcomes).toEqual(["ran", "served", "served"]);
    const poll: FakeTool = { ...sequence("get_job_status", ["queued", "running", "done"]), metadata: HINTS };
    const polled = await runScenario(adapter, [poll], times(3, step("get_job_status", { id: "j1" })));
    expect(polled.outcomes).toEqual(["ran", "ran", "ran"]);
  });
});
