/**
 * Issue 61, item 10 (left from round 4): the result normalizer replaced every UUID in a result by a placeholder,
 * so an answer that gave a new reservation UUID each time counted as the same answer (DESIGN 13: "data stays data
 * (… a new reservation id …) are changes"). Only an id under a key that names a per-call id (`request_id`,
 * `trace_id`, …) is volatile now; any other id is data. Two answers that differ by a new reservation id are
 * different answers for every rule (the consecutive rule of a tool judged by its answers, the repeat ceiling, result
 * dedupe). Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { normalizeResult } from "../../src/core/index.js";
import { ADAPTERS, changing, runScenario, step, stopAt, times } from "./support.js";

/** A UUID that is new at every `n`. */
const uuid = (n: number) => `${String(n).padStart(8, "0")}-9d4a-4b6e-8f1a-2c3d4e5f6a7b`;
const CALLS = 8;

describe("normalizeResult: an id is volatile only under a key that names a per-call id", () => {
  it("a new reservation id is a change; a new request id is not", () => {
    const held = (n: number) => JSON.stringify({ status: "held", reservation_id: uuid(n) });
    expect(normalizeResult(held(1))).not.toBe(normalizeResult(held(2)));
    expect(normalizeResult(`Reservation ${uuid(1)} held.`)).not.toBe(normalizeResult(`Reservation ${uuid(2)} held.`));
    const tagged = (n: number) => JSON.stringify({ status: "held", request_id: uuid(n) });
    expect(normalizeResult(tagged(1))).toBe(normalizeResult(tagged(2)));
  });
});

describe.each(ADAPTERS)("a new reservation UUID in each answer is a new answer, through %s", (adapter) => {
  it("holding a seat that answers a new reservation id each time: every call runs, the run is not stopped", async () => {
    const hold = changing("hold_seat", (n) => JSON.stringify({ status: "held", reservation_id: uuid(n) }));
    const r = await runScenario(adapter, [hold], times(CALLS, step("hold_seat", { flight: "HAT170" })));
    expect(r.outcomes).toEqual(Array(CALLS).fill("ran"));
    expect(stopAt(r)).toBeUndefined();
  });

  it("an answer whose only change is a new request_id is the same answer: the loop is blocked", async () => {
    const hold = changing("hold_seat", (n) => JSON.stringify({ status: "held", request_id: uuid(n) }));
    const r = await runScenario(adapter, [hold], times(CALLS, step("hold_seat", { flight: "HAT170" })));
    expect(r.outcomes.slice(0, 2)).toEqual(["ran", "ran"]);
    expect(r.outcomes[2]).toMatch(/^consecutive@/);
  });
});
