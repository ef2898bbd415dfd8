/**
 * The call index behind level 2 is derived from the window and carried from state to state by the reducer. It must
 * never change a decision: deciding on a state with a carried index equals deciding on its JSON copy (no index).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decideToolCall,
  emptyToolGuardState,
  outcomeEvents,
  planToolCalls,
  reduceToolGuard,
  resolveToolGuardOptions,
} from "../../src/core/index.js";
import type { ToolGuardState } from "../../src/index.js";

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
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (steps, windowSize, repetitionThreshold, countChangedResults) => {
          const options = resolveToolGuardOptions({ windowSize, repetitionThreshold, countChangedResults });
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
            expect(JSON.parse(JSON.stringify(state))).toEqual(reduceToolGuard(plain, events));
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
});
