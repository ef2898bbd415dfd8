/**
 * The call index behind level 2 is derived from the window and carried from state to state by the reducer (windows
 * of more than 32 calls; smaller ones are scanned). It must never change a decision: deciding on a state with a
 * carried index equals deciding on its JSON copy (none). The answers kept for result dedupe are checked alike.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INDEX_SLOTS, ListIndexes } from "../../src/common/list-index.js";
import {
  canonicalJson,
  decideToolCall,
  emptyToolGuardState,
  planToolCalls,
  reduceToolGuard,
  resolveToolGuardOptions,
  unchangedNote,
} from "../../src/core/index.js";
import type { ToolGuardState } from "../../src/index.js";
import { outcomeEvents } from "../../src/tool-calls/core/plan.js";

/** Two states hold the same JSON, key order aside (as canonical text: a fifth cheaper than a deep compare). */
function expectSameJson(state: ToolGuardState, expected: ToolGuardState): void {
  expect(canonicalJson(state)).toBe(canonicalJson(expected));
}

const callArb = fc.record({
  name: fc.constantFrom("read_file", "write_to_file", "bash", "list_files"),
  args: fc.record({ path: fc.constantFrom("a", "b", "c") }),
});
const stepArb = fc.record({
  calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
  ok: fc.boolean(),
  text: fc.constantFrom("x", "y"),
});

describe("derived call index", () => {
  it("decides exactly as a rebuilt index after any sequence of steps", () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 45 }),
        // Small windows are scanned; from 33 calls on, the index is used.
        fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 33, max: 40 })),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (steps, windowSize, repetitionThreshold, countChangedResults) => {
          const options = resolveToolGuardOptions({ windowSize, repetitionThreshold, rules: { countChangedResults } });
          let state: ToolGuardState = emptyToolGuardState();
          for (const step of steps) {
            const plain = JSON.parse(JSON.stringify(state)) as ToolGuardState;
            const calls = step.calls.map((c, i) => ({ ...c, id: String(i) }));
            const planned = planToolCalls(state, calls, options);
            const rebuilt = planToolCalls(plain, calls, options);
            expect(planned.decisions.map((d) => [d.allowed, d.rule, d.count])).toEqual(
              rebuilt.decisions.map((d) => [d.allowed, d.rule, d.count]),
            );
            const events = planned.decisions.flatMap((d) => [
              ...d.events,
              ...outcomeEvents(d, { ok: step.ok, text: step.text }, options),
            ]);
            state = reduceToolGuard(state, events);
            expectSameJson(state, reduceToolGuard(plain, events));
          }
          for (const c of [...steps.flatMap((s) => s.calls)]) {
            const a = decideToolCall(state, { ...c, id: "q" }, options);
            const b = decideToolCall(JSON.parse(JSON.stringify(state)), { ...c, id: "q" }, options);
            expect([a.allowed, a.rule, a.count]).toEqual([b.allowed, b.rule, b.count]);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the answers kept for result dedupe: the same note from a stored copy of the state, the newest 50, one per call", () => {
    const options = resolveToolGuardOptions();
    const planOptions = resolveToolGuardOptions({ rules: { redundancy: false } });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            path: fc.integer({ min: 0, max: 90 }),
            text: fc.constantFrom("same", "other"),
            deduped: fc.constantFrom(false, false, false, true),
          }),
          { minLength: 120, maxLength: 200 },
        ),
        (steps) => {
          let state: ToolGuardState = emptyToolGuardState();
          const newest = new Map<string, string>(); // key -> callId of its newest full answer
          steps.forEach((step, i) => {
            const call = { name: "read_file", args: { path: `f${step.path}` }, id: `c${i}` };
            const [decision] = planToolCalls(state, [call], planOptions).decisions;
            if (decision === undefined || decision.seq === undefined) return;
            const outcome = { ok: true, text: `${step.text} ${"x".repeat(200)}`, deduped: step.deduped };
            const plain = JSON.parse(JSON.stringify(state)) as ToolGuardState;
            const note = (s: ToolGuardState) =>
              unchangedNote(s, { key: decision.key, tool: "read_file", id: call.id }, outcome, options, () => true);
            expect(note(state)).toEqual(note(plain));
            const events = [...decision.events, ...outcomeEvents(decision, outcome, options)];
            state = reduceToolGuard(state, events);
            expectSameJson(state, reduceToolGuard(plain, events));
            if (!step.deduped) {
              newest.delete(decision.key);
              newest.set(decision.key, call.id);
            }
            const answers = state.answers ?? [];
            expect(answers.map((a) => [a.key, a.callId])).toEqual([...newest].slice(-50));
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("derived list indexes held in slots", () => {
  it("give each list its own index whatever the number of lists in turn, rebuilding one whose slot was reused", () => {
    let builds = 0;
    const indexes = new ListIndexes<number, number>((list) => {
      builds += 1;
      return list.reduce((a, b) => a + b, 0);
    });
    const lists = Array.from({ length: INDEX_SLOTS * 3 }, (_, i) => [i, i + 1]);
    // Many lists in turn (threads reduced one after the other): each gets the right index.
    for (let round = 0; round < 3; round += 1) {
      for (const list of lists) expect(indexes.of(list)).toBe(list[0]! + list[1]!);
    }
    expect(builds).toBe(lists.length * 3); // more lists than slots: each slot is reused before its list comes back
    // A list taken from gives its index to the list that replaces it; the old one builds its own again.
    builds = 0;
    const [first] = lists as [number[]];
    indexes.of(first);
    const taken = indexes.take(first);
    expect(taken).toBe(first[0]! + first[1]!);
    const next = [first[0]!, first[1]!, 0];
    indexes.give(next, taken!);
    expect(indexes.of(next)).toBe(taken);
    expect(indexes.of(first)).toBe(first[0]! + first[1]!);
    expect(builds).toBe(2); // first's slot had been reused (built again), then first lost its index to `next`
  });
});
