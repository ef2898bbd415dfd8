/**
 * Issue 61, item 2: volatile-argument stripping merged different records. A value under a key that names call
 * metadata (`trace_id`, `request_id`, `correlation_id`, `sent_at`, `timestamp`, `nonce`, `requested_at`,
 * `idempotency_key`) and shaped as a per-call id or time was left out of every call's identity, so a lookup by
 * trace id was one call for every trace: a tool with `readOnlyHint` + `idempotentHint` was served the first record's
 * answer for the second, a plain `get_trace` had its second lookup blocked as identical. Now a value the tool's
 * schema declares is what the tool is asked about, and stays in the identity; an identity that stripping changed is
 * never served from the result cache; where the tool's schema is not known (replay given only names), a stripped
 * call is judged by its answers, never blocked before it runs. Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { replayGuards } from "../../src/replay/index.js";
import { ADAPTERS, type FakeTool, recordedRun, runScenario, step } from "./support.js";

const CACHED = { readOnlyHint: true, idempotentHint: true };
const TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACE_B = "00f067aa0ba902b7a3ce929d0e0e4736";
const UUID_A = "3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b";
const UUID_B = "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
/** A tool answering with the record its one declared argument names. */
const lookup = (name: string, arg: string, metadata?: Record<string, unknown>): FakeTool => ({
  name,
  respond: (_n, args) => `record for ${String(args[arg])}`,
  metadata,
  schema: z.object({ [arg]: z.union([z.string(), z.number()]) }),
});

describe.each(ADAPTERS)(
  "a volatile-looking value the tool's schema asks for is the record asked about, through %s",
  (adapter) => {
    it("get_trace with readOnlyHint + idempotentHint: the second trace is looked up, not served the first's answer", async () => {
      const tools = [lookup("get_trace", "trace_id", CACHED)];
      const r = await runScenario(adapter, tools, [
        step("get_trace", { trace_id: TRACE_A }),
        step("get_trace", { trace_id: TRACE_B }),
      ]);
      expect(r.outcomes).toEqual(["ran", "ran"]);
      expect(r.answers).toEqual([`record for ${TRACE_A}`, `record for ${TRACE_B}`]);
    });

    it("a plain get_trace: the second lookup by another trace id runs, it is not blocked as identical", async () => {
      const tools = [lookup("get_trace", "trace_id")];
      const r = await runScenario(adapter, tools, [
        step("get_trace", { trace_id: TRACE_A }),
        step("get_trace", { trace_id: TRACE_B }),
      ]);
      expect(r.outcomes).toEqual(["ran", "ran"]);
    });

    it("lookups by request_id, correlation_id, sent_at, timestamp, requested_at, nonce and idempotency_key all run", async () => {
      const cases: [string, string, string | number, string | number][] = [
        ["get_request", "request_id", UUID_A, UUID_B],
        ["get_correlated", "correlation_id", UUID_A, UUID_B],
        ["get_messages", "sent_at", "2026-03-01T10:00:03Z", "2026-03-01T10:00:04Z"],
        ["get_prices", "timestamp", "2026-03-01T10:00:03.512Z", "2026-03-01T10:05:09.100Z"],
        ["list_orders", "requested_at", "2026-03-01T10:00:03Z", "2026-03-02T11:00:07Z"],
        ["get_block", "nonce", 1764370000, 1764370001],
        ["replay_webhook", "idempotency_key", UUID_A, UUID_B],
      ];
      const tools = cases.map(([name, arg]) => lookup(name, arg, name === "get_prices" ? CACHED : undefined));
      const script = cases.flatMap(([name, arg, a, b]) => [step(name, { [arg]: a }), step(name, { [arg]: b })]);
      const r = await runScenario(adapter, tools, script);
      expect(r.outcomes).toEqual(script.map(() => "ran"));
    });

    it("a request id the schema does not ask for: a cached tool's repeat with a new one runs, it is not served", async () => {
      const search: FakeTool = {
        name: "search_docs",
        respond: (n) => `results, edition ${n}`,
        metadata: CACHED,
        schema: z.object({ query: z.string() }),
      };
      const script = [
        step("search_docs", { query: "retries", request_id: UUID_A }),
        step("search_docs", { query: "retries", request_id: UUID_B }),
        step("search_docs", { query: "retries" }),
        step("search_docs", { query: "retries" }),
      ];
      const r = await runScenario(adapter, [search], script);
      // The plain repeat (no stripping) is served; the one whose identity stripping changed ran.
      expect(r.outcomes).toEqual(["ran", "ran", "ran", "served"]);
    });
  },
);

describe("replay given only the tools' names (their schemas unknown): a stripped call is judged by its answers", () => {
  it("get_trace by two trace ids: both run", () => {
    const run = recordedRun(
      [lookup("get_trace", "trace_id")],
      [step("get_trace", { trace_id: TRACE_A }), step("get_trace", { trace_id: TRACE_B })],
    );
    const { decisions } = replayGuards(run, { agentTools: ["get_trace"] });
    expect(decisions.map((d) => d.action)).toEqual(["allow", "allow"]);
  });

  it("the same search with a fresh request id, answering the same each time, is blocked once it answered the same twice, and stopped", () => {
    const tools: FakeTool[] = [{ name: "search", respond: () => "No results." }];
    const uuid = (n: number) => `${String(n).padStart(8, "0")}-9d4a-4b6e-8f1a-2c3d4e5f6a7b`;
    const script = Array.from({ length: 8 }, (_, i) => step("search", { query: "x", requestId: uuid(i) }));
    const { decisions } = replayGuards(recordedRun(tools, script), { agentTools: ["search"] });
    expect(decisions.map((d) => d.action)).toEqual(["allow", "allow", "block", "block", ...Array(4).fill("stop")]);
  });
});
