/**
 * Strikes follow every blocked call of a response, and escalation compares calls as the block rules do (issue 34,
 * item 5). Before: parallel calls re-issued in a different order each round were all blocked, but each round's first
 * blocked call differed from the call the last strike was on, so the count restarted at 1 and the run never ended
 * (the same rounds in a fixed order stopped at round 4). And with `ignoreArgs: ["task_progress"]` (Cline sends a
 * changing `task_progress` checklist with every tool call) the block rules ignored the argument but escalation did
 * not: every repeat counted as "did something different" and escalation never passed level 1. Each scenario runs
 * through createReactAgent + escalationHook, createAgent + guardMiddleware and replayGuards (support.ts).
 *
 * Issue 43, class 8 moved the stop from the 4th identical call to the 5th: Cline, Qwen Code and deer-flow stop a
 * repeated call at the 5th, OpenRouter's agent at the 6th; blocks at the 2nd and 3rd call stay, the 4th is held at
 * level 2 (`escalation.askFrom`, default 5).
 */
import { describe, expect, it } from "vitest";
import {
  ADAPTERS,
  type Adapter,
  runScenario,
  type ScenarioResult,
  type ScriptedResponse,
  same,
  step,
  stopAt,
} from "./support.js";

const READS = ["a.py", "b.py", "c.py"].map((path) => step("read_file", { path }));
const tools = [same("read_file", "x = 1\n"), same("list_files", "a.py\nb.py\nc.py")];

/** Round `r` (0-based) of the three parallel reads, rotated by `r` when `rotate`. */
const round = (r: number, rotate: boolean): ScriptedResponse =>
  rotate ? [...READS.slice(r % 3), ...READS.slice(0, r % 3)] : READS;

/** The outcomes with the rule left out (`"blocked@2"`): which rule blocks a read (redundant, consecutive) is not the point. */
const levels = (r: ScenarioResult) => r.outcomes.map((o) => o.replace(/^[a-z_]+@/, "blocked@"));

/** The round (1-based) a run stopped at: every call of a response shares its outcome "stop". */
const stopRound = (r: ScenarioResult) => {
  const at = stopAt(r);
  return at === undefined ? undefined : Math.ceil(at / READS.length);
};

describe.each(ADAPTERS)("strikes through %s", (adapter: Adapter) => {
  const live = adapter !== "replayGuards";

  it("three parallel reads re-issued in a fixed order: every round blocked, the run stops at round 5", async () => {
    const r = await runScenario(
      adapter,
      tools,
      Array.from({ length: 8 }, (_, i) => round(i, false)),
    );
    expect(levels(r).slice(0, 12)).toEqual([
      ...["ran", "ran", "ran"],
      ...["blocked@1", "blocked@1", "blocked@1"],
      ...["blocked@2", "blocked@2", "blocked@2"],
      ...["blocked@2", "blocked@2", "blocked@2"], // the 4th identical call: held at level 2 (class 8)
    ]);
    expect(stopRound(r)).toBe(5);
  });

  it("the same reads in a different order each round: strikes follow every blocked call, the run stops by round 6", async () => {
    const r = await runScenario(
      adapter,
      tools,
      Array.from({ length: 8 }, (_, i) => round(i, true)),
    );
    expect(levels(r).slice(0, 9)).toEqual([
      ...["ran", "ran", "ran"],
      ...["blocked@1", "blocked@1", "blocked@1"],
      ...["blocked@2", "blocked@2", "blocked@2"],
    ]);
    const stopped = stopRound(r);
    expect(stopped).toBeDefined();
    expect(stopped).toBeLessThanOrEqual(6); // the limit
    expect(stopped).toBe(5); // as the fixed order
    if (live) expect(r.interrupt).toMatchObject({ level: 3 });
  });

  it("a round that blocks only some calls of the last struck round still adds a strike", async () => {
    // Round 2 blocks a, b, c; round 3 repeats only c (with a new read of d.py, which runs): c's block is strike 2.
    const d = step("read_file", { path: "d.py" });
    const r = await runScenario(adapter, tools, [READS, READS, [d, READS[2]!]]);
    expect(levels(r).slice(6)).toEqual(["ran", "blocked@2"]);
    expect(r.strikes).toBe(2);
  });

  describe("Cline's task_progress: an ignored argument is ignored by escalation too", () => {
    const progress = (n: number) => `- [x] read the config\n- [ ] fix the bug (attempt ${n})`;
    const reads = Array.from({ length: 8 }, (_, i) =>
      step("read_file", { path: "config.py", task_progress: progress(i + 1) }),
    );

    it("ignoreArgs: ['task_progress']: the same read with a new checklist each time escalates to a stop by the 6th call", async () => {
      const r = await runScenario(adapter, tools, reads, { ignoreArgs: ["task_progress"] });
      expect(levels(r).slice(0, 3)).toEqual(["ran", "blocked@1", "blocked@2"]);
      expect(stopAt(r)).toBeLessThanOrEqual(6); // the limit
      expect(stopAt(r)).toBe(5); // the 5th identical call, as Cline stops (issue 43, class 8)
      if (live) expect(r.interrupt).toMatchObject({ level: 3, tool: "read_file" });
    });

    it("the same with the tool's own ignoreArgs (tools.read_file.ignoreArgs)", async () => {
      const r = await runScenario(adapter, tools, reads, { tools: { read_file: { ignoreArgs: ["task_progress"] } } });
      expect(stopAt(r)).toBe(5);
    });

    it("an argument that is not ignored still makes a different call: a read of another file is no repeat", async () => {
      const other = step("read_file", { path: "app.py", task_progress: progress(9) });
      const r = await runScenario(adapter, tools, [reads[0]!, reads[1]!, other], { ignoreArgs: ["task_progress"] });
      expect(levels(r)).toEqual(["ran", "blocked@1", "ran"]);
      expect(r.strikes).toBe(0); // a response whose calls all ran: progress
    });
  });
});
