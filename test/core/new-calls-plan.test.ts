/**
 * The turn procedure's shortcut for responses whose calls all break no rule (`newCallsPlan`) must give exactly the
 * plan of the full procedure (`planTurnFully`) whenever it answers: checked on thread states built by the engine
 * itself from random calls, outcomes, runs and options, at every turn of every thread.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  emptyToolGuardState,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolGuardOptions,
  type ToolGuardState,
} from "../../src/core/index.js";
import { commitTurn, newCallsPlan, planTurn, planTurnFully, type TurnInput } from "../../src/tool-calls/core/plan.js";

/** Tools of every kind the classification knows: reads, writes, a shell, an unknown tool, a wait, a repeatable one. */
const TOOLS = ["read_file", "list_files", "write_file", "bash", "run_tests", "create_subtask", "wait", "send_email"];

const argsArb = fc.oneof(
  fc.record({ path: fc.constantFrom("a.py", "b.py", "src", "src/c.py", ".") }),
  fc.record({ path: fc.constantFrom("a.py", "b.py"), content: fc.constantFrom("x", "y") }),
  fc.record({ command: fc.constantFrom("ls", "cat a.py", "pytest", "echo x > a.py", "grep -r foo .") }),
  fc.record({ title: fc.constantFrom("t1", "t2") }),
  fc.constant({}),
);

/** Reads more often than the rest: a read repeated after the window moved on is the redundant rule's case. */
const callArb = fc.record({
  name: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("read_file", "list_files") }, fc.constantFrom(...TOOLS)),
  args: argsArb,
});

/** One turn: the response's calls, what each returns, and whether a new person's message came before it. */
const turnArb = fc.record({
  calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
  outcomes: fc.array(
    fc.record({
      ok: fc.boolean(),
      text: fc.constantFrom("", "same", "other", "Error: boom", "took 0.1s", "took 0.2s"),
    }),
    {
      minLength: 3,
      maxLength: 3,
    },
  ),
  newRun: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  disabled: fc.constantFrom(false, false, false, false, true),
});

const optionsArb = fc.record({
  windowSize: fc.constantFrom(2, 5, 10, 40),
  repetitionThreshold: fc.integer({ min: 1, max: 4 }),
  mode: fc.constantFrom("enforce" as const, "enforce" as const, "observe" as const),
  rules: fc.record({
    consecutive: fc.boolean(),
    redundancy: fc.boolean(),
    cycles: fc.boolean(),
    // The file-edits rule at limits the random threads reach (a.py and b.py are written often).
    fileEdits: fc.constantFrom(
      false as const,
      { remindAt: 2, blockAt: 4 },
      { remindAt: false as const, blockAt: 3 },
      { remindAt: 8, blockAt: 12 },
    ),
    // The repeat ceiling at limits the random threads reach, and results compared exactly or normalized.
    repeatCeiling: fc.constantFrom(
      false as const,
      { remindAt: 2, blockAt: 3 },
      { remindAt: false as const, blockAt: 4 },
      { remindAt: 6, blockAt: 10 },
    ),
    normalizeResult: fc.boolean(),
  }),
  memory: fc.record({
    runBoundary: fc.constantFrom("human-message" as const, "none" as const),
    acrossRuns: fc.constantFrom("fresh" as const, "keep" as const),
  }),
  escalation: fc.record({
    enabled: fc.boolean(),
    maxReminders: fc.integer({ min: 0, max: 2 }),
    sameErrorThreshold: fc.integer({ min: 0, max: 3 }),
  }),
  tools: fc.constantFrom<ToolGuardOptions["tools"]>(
    {},
    { create_subtask: { invalidates: "none" } },
    { read_file: { exempt: true } },
    { write_file: { fileEdits: false } },
    { bash: { repeatCeiling: { remindAt: 2, blockAt: 3 } } },
    { run_tests: { repeatCeiling: false as const } },
  ),
});

describe("the turn procedure's shortcut for responses of new calls", () => {
  it("gives the full procedure's plan whenever it answers, and answers in most turns of new calls", () => {
    let answered = 0;
    let declined = 0;
    fc.assert(
      fc.property(optionsArb, fc.array(turnArb, { minLength: 1, maxLength: 40 }), (given, turns) => {
        const options = resolveToolGuardOptions(given);
        let state: ToolGuardState = emptyToolGuardState();
        let run = 0;
        turns.forEach((t, i) => {
          if (t.newRun) run += 1;
          const turn: TurnInput = {
            id: `m${i}`,
            text: i % 7 === 3 ? "I will try a different approach." : "",
            calls: t.calls.map((c, j) => ({ ...c, id: `c${i}_${j}` })),
            run: `h${run}`,
          };
          const ctx = { disabled: t.disabled, clock: () => 1_000 + i };
          const full = planTurnFully(state, turn, options, ctx);
          const quick = newCallsPlan(state, turn, options, ctx);
          if (quick === undefined) {
            declined += 1;
          } else {
            answered += 1;
            expect(quick.decisions).toStrictEqual(full.decisions);
            expect(quick.turnEvents).toStrictEqual(full.turnEvents);
            expect(quick.stop).toBeUndefined();
            expect(full.stop).toBeUndefined();
            expect(quick.state).toStrictEqual(full.state);
          }
          const plan = planTurn(state, turn, options, ctx);
          expect(plan.decisions).toStrictEqual(full.decisions);
          if (plan.stop !== undefined) {
            state = reduceToolGuard(state, plan.stop.events);
            return;
          }
          state = reduceToolGuard(state, commitTurn(plan, t.outcomes, options));
        });
      }),
      { numRuns: 1000, seed: 20261124 },
    );
    // The shortcut is taken in the usual turn, and the full procedure still decides the others (repeats, blocks).
    expect(answered).toBeGreaterThan(2000);
    expect(declined).toBeGreaterThan(2000);
  });
});
