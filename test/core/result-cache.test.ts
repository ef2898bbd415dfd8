/**
 * The result cache's pure core: which tools it serves, what a change drops, its bound, and that nothing is served
 * after its time, without its message, or in observe mode; a served call costs no strike and counts toward the ceiling.
 */
import { describe, expect, it } from "vitest";
import {
  type CacheEntry,
  commitTurn,
  emptyToolGuardState,
  planTurn,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolGuardState,
} from "../../src/core/index.js";
import { callFacts } from "../../src/tool-calls/core/facts.js";
import { invalidateCache, noteCached } from "../../src/tool-calls/core/result-cache.js";

const cacheTtlMs = (
  call: { name: string; args: unknown },
  ...rest: [ReturnType<typeof resolveToolGuardOptions>, object]
) => callFacts(call, ...rest).cacheTtlMs;

const HINTS = {
  readOnlyHints: { search: true, get_status: true },
  idempotentHints: { search: true, get_status: true },
};
const entry = (key: string, paths: string[] = []): CacheEntry => ({
  key,
  tool: "search",
  callId: `c-${key}`,
  digest: "d",
  until: 10,
  paths,
});

describe("the result cache's core", () => {
  it("serves a tool read-only and idempotent by hints or options, never a poll, a shell or an opted-out tool", () => {
    const options = resolveToolGuardOptions();
    const ttl = (name: string, ctx = HINTS, args: unknown = {}) => cacheTtlMs({ name, args }, options, ctx);
    expect(ttl("search")).toBe(300_000);
    expect(ttl("search", { readOnlyHints: { search: true }, idempotentHints: {} } as never)).toBeUndefined();
    expect(ttl("get_status")).toBeUndefined(); // a poll by its name
    expect(ttl("bash", { readOnlyHints: { bash: true }, idempotentHints: { bash: true } } as never)).toBeUndefined();
    const byOptions = resolveToolGuardOptions({ tools: { lookup: { readOnly: true, idempotent: true } } });
    expect(cacheTtlMs({ name: "lookup", args: {} }, byOptions, {})).toBe(300_000);
    const own = resolveToolGuardOptions({
      tools: { fetch_page: { cache: { ttlSeconds: 5 } }, search: { cache: false } },
    });
    expect(cacheTtlMs({ name: "fetch_page", args: {} }, own, {})).toBe(5_000);
    expect(cacheTtlMs({ name: "search", args: {} }, own, HINTS)).toBeUndefined();
    expect(cacheTtlMs({ name: "search", args: {} }, resolveToolGuardOptions({ memory: { cache: false } }), HINTS)).toBe(
      undefined,
    );
  });

  it("a write drops the results of its paths and of unknown scope; a change of unknown scope drops all; bounded", () => {
    const entries = [entry("a", ["/r/src/a.py"]), entry("b", ["/r/docs"]), entry("c")];
    const keys = (list: readonly CacheEntry[] | undefined) => list?.map((e) => e.key);
    expect(keys(invalidateCache(entries, { kind: "write", paths: ["/r/src/a.py"] }))).toEqual(["b"]);
    expect(keys(invalidateCache(entries, { kind: "write", paths: ["/r/docs/x.md"] }))).toEqual(["a"]);
    expect(invalidateCache(entries, { kind: "read", paths: [] })).toBe(entries);
    expect(invalidateCache(entries, { kind: "mutate" })).toEqual([]);
    let list: CacheEntry[] = [];
    for (let i = 0; i < 60; i += 1) list = noteCached(list, entry(String(i % 55)), 50);
    expect(list.length).toBe(50);
    expect(list.at(-1)?.key).toBe("4"); // the 60th result, its earlier entry replaced
  });

  it("serves while good and present; not after ttl, not when the message is gone, not in observe mode", () => {
    const options = resolveToolGuardOptions();
    let now = 1_000;
    let present = true;
    const ctx = { ...HINTS, clock: () => now, answerPresent: () => present };
    const call = { name: "search", args: { q: "x" } };
    const turn = (state: ToolGuardState, id: string, opts = options) => {
      const plan = planTurn(state, { id, text: "", calls: [{ ...call, id }] }, opts, ctx);
      const decision = plan.decisions[0];
      const events = commitTurn(plan, [decision?.allowed ? { ok: true, text: "hits" } : undefined], opts);
      return { decision, state: reduceToolGuard(state, events) };
    };
    const first = turn(emptyToolGuardState(), "c1");
    expect(first.decision?.allowed).toBe(true);
    expect(first.state.cache?.[0]).toMatchObject({ callId: "c1", until: 301_000 });
    const second = turn(first.state, "c2");
    expect(second.decision).toMatchObject({ allowed: false, served: { callId: "c1" } });
    expect(second.state.stats.served).toBe(1);
    expect(second.state.escalation.strikes).toBe(0);
    expect(second.state.repeats?.calls.at(-1)?.calls).toBe(2); // the ceiling counts it
    present = false;
    expect(turn(second.state, "c3").decision?.allowed).toBe(true);
    present = true;
    now = 301_000;
    expect(turn(second.state, "c4").decision?.allowed).toBe(true);
    now = 2_000;
    const observe = resolveToolGuardOptions({ mode: "observe" });
    expect(turn(second.state, "c5", observe).decision?.allowed).toBe(true);
  });
});
