/**
 * Issue 43, class 12: volatile call metadata in arguments (a fresh UUID `requestId`, an ISO `ts`) is left out of a
 * call's identity; a value is dropped only when its key names call metadata and its value is shaped as a UUID, an
 * ISO date-time or an epoch time. Data is kept whatever its shape (`order_id: <uuid>`, `request_id: "r3"`). The
 * block rules (`callIdentity`) and escalation (`escalationCompare`, through `identityArgs`) see the same arguments.
 */
import { describe, expect, it } from "vitest";
import { callIdentity, identityArgs } from "../../src/common/identity/classify.js";
import { withoutVolatileArgs } from "../../src/common/identity/volatile-args.js";
import { escalationCompare } from "../../src/tool-calls/core/detect.js";
import { resolveToolGuardOptions } from "../../src/tool-calls/core/options.js";

const U1 = "3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b";
const U2 = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
const ISO1 = "2026-11-28T10:00:03.117Z";
const ISO2 = "2026-11-28T10:00:09+01:00";

describe("withoutVolatileArgs", () => {
  it.each([
    ["requestId", U1],
    ["request_id", `req_${U1}`],
    ["x-request-id", U1.replace(/-/g, "")],
    ["clientRequestId", U1],
    ["trace_id", U1],
    ["parentSpanId", U1],
    ["correlation_id", `urn:uuid:${U1}`],
    ["idempotency_key", U1],
    ["nonce", 1_764_324_003_117],
    ["ts", ISO1],
    ["timestamp", "2026-11-28T10:00:09+01:00"],
    ["sent_at", ISO2],
    ["sent_at", 1_764_324_003],
    ["sentAt", "2026-11-28 10:00"],
    ["requested_at", ISO1],
  ])("drops %s: %s", (key, value) => {
    expect(withoutVolatileArgs({ q: "x", [key]: value })).toEqual({ q: "x" });
  });

  it.each([
    ["order_id", U1],
    ["id", U1],
    ["user_id", U1],
    ["path", U1],
    ["request_id", "r3"],
    ["requestId", "abc123"],
    ["nonce", "n-7"],
    ["ts", "yesterday"],
    // `ts` and `timestamp` may name the data: Slack's message ts (an epoch with a fraction), an epoch, a round time.
    ["ts", "1503435956.000247"],
    ["timestamp", 1_764_324_003],
    ["timestamp", "2024-01-01T10:00:00Z"],
    ["timestamp", "2026-11-28"],
    ["timestamp", 42],
    ["start_time", ISO1],
    ["starts_at", ISO1],
    ["created_at", ISO1],
    ["run_id", U1],
    ["session_id", U1],
    ["message_id", U1],
  ])("keeps %s: %s (data, or not shaped as a fresh id or time)", (key, value) => {
    const args = { q: "x", [key]: value };
    expect(withoutVolatileArgs(args)).toBe(args);
  });

  it("looks two levels down into plain objects and lists, no further", () => {
    expect(withoutVolatileArgs({ q: "x", metadata: { trace_id: U1, user: "u1" } })).toEqual({
      q: "x",
      metadata: { user: "u1" },
    });
    expect(withoutVolatileArgs({ messages: [{ text: "hi", ts: ISO1 }] })).toEqual({ messages: [{ text: "hi" }] });
    const deep = { a: { b: { c: { trace_id: U1 } } } };
    expect(withoutVolatileArgs(deep)).toBe(deep);
  });

  it("never changes its argument, and returns it as it is when nothing is dropped", () => {
    const args = { q: "x", requestId: U1, meta: { ts: ISO1 } };
    const copy = structuredClone(args);
    withoutVolatileArgs(args);
    expect(args).toEqual(copy);
    for (const same of [null, 7, "text", [1, 2], { q: "x" }]) expect(withoutVolatileArgs(same)).toBe(same);
  });
});

describe("call identity without volatile metadata", () => {
  const options = resolveToolGuardOptions();
  const key = (name: string, args: unknown) => callIdentity(name, args, options).key;

  it("the same call with a fresh request id or time of sending has one key", () => {
    expect(key("search", { q: "x", requestId: U1 })).toBe(key("search", { q: "x", requestId: U2 }));
    expect(key("search", { q: "x", ts: ISO1 })).toBe(key("search", { q: "x" }));
    expect(key("bash", { command: "ls -la", trace_id: U1 })).toBe(key("bash", { command: "ls  -la", trace_id: U2 }));
  });

  it("data keeps its keys apart: UUID order ids, short request ids, another query", () => {
    expect(key("get_order", { order_id: U1 })).not.toBe(key("get_order", { order_id: U2 }));
    expect(key("lookup", { key: "k", request_id: "r0" })).not.toBe(key("lookup", { key: "k", request_id: "r1" }));
    expect(key("search", { q: "x", requestId: U1 })).not.toBe(key("search", { q: "y", requestId: U1 }));
  });

  it("a path argument beside volatile metadata is still normalized, and still counts as the call's path", () => {
    const opts = { root: "/repo" };
    const one = callIdentity("read_file", { path: "./a.py", requestId: U1 }, opts);
    expect(one.key).toBe(callIdentity("read_file", { path: "/repo/a.py" }, opts).key);
    expect(one.effect).toEqual({ kind: "read", paths: ["/repo/a.py"] });
  });

  it("escalation compares what the block rules compare (identityArgs)", () => {
    const { view } = escalationCompare(options);
    expect(view({ tool: "search", args: { q: "x", requestId: U1, ts: ISO1 } })).toEqual({ q: "x" });
    expect(identityArgs("get_order", { order_id: U1, ts: ISO1 })).toEqual({ order_id: U1 });
  });
});
