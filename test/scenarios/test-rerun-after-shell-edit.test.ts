/**
 * Issue 43, class 4 (a shell-only agent, as mini-swe-agent and SWE-agent work: edit with `sed -i`, run the test, edit,
 * run the test, with the same failure text until the fix): the 4th and 5th test runs were blocked, the 5th right after
 * the fix, because an edit made by the same shell tool did not count as a change between the runs; a manual
 * `git bisect` (bisect step, run the tests, …) the same. docs/guards.md promises "a test re-run after each edit never
 * adds up". Now a write of known files by another call of the same tool (`sed -i … src/calc.py`) and a git command
 * that moves the working tree (`git bisect good`, `git checkout`, `git stash`) are changes the re-run follows. The
 * same test run again with nothing changed in between still adds up. Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, type FakeTool, runScenario, step } from "./support.js";

const options = { rules: { root: "/work/app" } };
const TEST = step("bash", { command: "python -m pytest tests/test_calc.py -q" });
const FAILED = "F\nFAILED tests/test_calc.py::test_add - assert 3 == 4\n1 failed in 0.02s";

/** A shell whose test run fails until the `fixAt`-th edit or bisect step, whatever else it is asked. */
function shell(fixAt: number): FakeTool {
  let changes = 0;
  return {
    name: "bash",
    respond: (_n, args) => {
      const command = String(args.command);
      if (command.startsWith("sed") || command.startsWith("git bisect")) {
        changes += 1;
        return command.startsWith("git") ? `Bisecting: ${8 - changes} revisions left to test after this` : "";
      }
      return changes >= fixAt ? ".\n1 passed in 0.02s" : FAILED;
    },
  };
}

describe.each(ADAPTERS)("a test re-run after each shell edit, through %s", (adapter) => {
  it("sed -i edit, test, six times with the same failure, then the fix: every call runs", async () => {
    const script = Array.from({ length: 7 }, (_, i) => [
      step("bash", { command: `sed -i 's/return a - b/return a + b # try ${i}/' src/calc.py` }),
      TEST,
    ]).flat();
    const r = await runScenario(adapter, [shell(7)], script, options);
    expect(r.outcomes.every((o) => o === "ran" || o === "failed")).toBe(true);
    expect(r.answers.at(-1)).toContain("1 passed");
  });

  it("a manual git bisect: bisect step, test, eight times: every call runs", async () => {
    const script = Array.from({ length: 8 }, (_, i) => [
      step("bash", { command: i % 2 === 0 ? "git bisect bad" : "git bisect good" }),
      TEST,
    ]).flat();
    const r = await runScenario(adapter, [shell(99)], script, options);
    expect(r.outcomes.every((o) => o === "ran" || o === "failed")).toBe(true);
  });

  it("the loop is still caught: the same test re-run with nothing changed in between is blocked", async () => {
    const r = await runScenario(adapter, [shell(99)], [TEST, TEST, TEST, TEST, TEST], options);
    expect(r.outcomes.slice(0, 2)).toEqual(["ran", "ran"]);
    expect(r.outcomes[2]).toMatch(/^consecutive@1$/);
  });
});
