/**
 * Issue 43, class 12 (measured from outside; OpenRouter's agent, `doom-loop-remediation.test.ts` H1, and Cline's
 * `loop-detection.ts`): volatile values in a call's arguments — a fresh UUID `requestId`, an ISO `ts` — made every
 * call of a stuck loop new, so it was never blocked nor stopped. A value shaped as a UUID, an ISO date-time or an
 * epoch time, under a key that names call metadata (a request, trace or correlation id, an idempotency key, a nonce,
 * a time of sending), is left out of a call's identity now; Cline leaves its `task_progress` out by name the same
 * way. Every other value is kept: a UUID `order_id` is the order asked about, and short request ids `r0`…`r5` stay
 * distinct (OpenRouter's test pins those as new calls). Through createAgent, createReactAgent and replay.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ADAPTERS, runScenario, same, step, stopAt } from "./support.js";

const CALLS = 8;
/** A UUID (version 4 layout) that is new at every `n`, as a client library would make one per request. */
const uuid = (n: number) => {
  const h = createHash("sha256").update(`call ${n}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
/** An ISO time of sending, a few seconds later at every call. */
const sentAt = (n: number) => new Date(Date.UTC(2026, 10, 28, 10, 0, 3 * n, 17 * n)).toISOString();
const calls = (make: (n: number) => ReturnType<typeof step>) => Array.from({ length: CALLS }, (_, i) => make(i + 1));

const tools = [
  same("search", "No results for 'vitest snapshot serializer'."),
  same("lookup", '{"value": "same answer every time"}'),
  same("get_order", '{"status": "shipped", "items": 2}'),
];
const plainSearch = calls(() => step("search", { query: "vitest snapshot serializer" }));
const plainLookup = calls(() => step("lookup", { key: "same" }));

describe.each(ADAPTERS)("volatile metadata in arguments is no new call, through %s", (adapter) => {
  it("the same search with a fresh UUID requestId each time is blocked and stopped like a plain repeat", async () => {
    const plain = await runScenario(adapter, tools, plainSearch);
    const r = await runScenario(
      adapter,
      tools,
      calls((n) => step("search", { query: "vitest snapshot serializer", requestId: uuid(n) })),
    );
    expect(r.outcomes).toEqual(plain.outcomes);
    expect(r.ran.search).toBe(1); // the loop's calls stopped running at the 2nd
    expect(stopAt(r)).toBe(5);
  });

  it("the same lookup with an ISO ts (and a trace id in its metadata) each time is stopped like a plain repeat", async () => {
    const plain = await runScenario(adapter, tools, plainLookup);
    const r = await runScenario(
      adapter,
      tools,
      calls((n) => step("lookup", { key: "same", ts: sentAt(n), metadata: { trace_id: uuid(100 + n) } })),
    );
    expect(r.outcomes).toEqual(plain.outcomes);
    expect(r.ran.lookup).toBe(plain.ran.lookup);
    expect(stopAt(r)).toBe(stopAt(plain));
    expect(stopAt(r)).toBeDefined();
  });

  it("get_order with a different UUID order_id each time: every call runs, the run is not stopped", async () => {
    const r = await runScenario(
      adapter,
      tools,
      calls((n) => step("get_order", { order_id: uuid(n) })),
    );
    expect(r.outcomes).toEqual(Array(CALLS).fill("ran"));
    expect(r.ran.get_order).toBe(CALLS);
    expect(stopAt(r)).toBeUndefined();
  });

  it("short request ids r0…r5 stay distinct: all six lookups run (OpenRouter pins them as new calls)", async () => {
    const script = Array.from({ length: 6 }, (_, i) => step("lookup", { key: "same", request_id: `r${i}` }));
    const r = await runScenario(adapter, tools, script);
    expect(r.outcomes).toEqual(Array(6).fill("ran"));
    expect(stopAt(r)).toBeUndefined();
  });

  it("a different real argument beside a volatile one is a new call: every search runs", async () => {
    const r = await runScenario(
      adapter,
      tools,
      calls((n) => step("search", { query: `vitest topic ${n}`, requestId: uuid(n), ts: sentAt(n) })),
    );
    expect(r.outcomes).toEqual(Array(CALLS).fill("ran"));
    expect(r.ran.search).toBe(CALLS);
    expect(stopAt(r)).toBeUndefined();
  });
});
