/**
 * Issue 43, class 11 (from the same peers' loop scenarios: a model alternating two already-answered calls, or
 * rotating three): every call was blocked, but each block was of another call than the last strike's, so the count
 * restarted at 1 and the strikes never passed 1 — about 96 calls were blocked until the step budget ended the run.
 * Now strikes follow every call blocked since the agent last made progress: alternation and rotation escalate like a
 * call repeated, and the run stops. A read of a new file between the repeats is progress and runs. Through
 * createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, runScenario, same, step, stopAt } from "./support.js";

const read = (path: string) => step("read_file", { path });
const tools = [same("read_file", "x = 1\n")];
const cycleOf = (paths: string[], n: number) => Array.from({ length: n }, (_, i) => read(paths[i % paths.length]!));
const levels = (outcomes: string[]) => outcomes.map((o) => Number(o.split("@")[1] ?? 0));

describe.each(ADAPTERS)("strikes across alternation and rotation, through %s", (adapter) => {
  it("two reads alternated: the strikes climb across both calls and the run stops", async () => {
    const r = await runScenario(adapter, tools, cycleOf(["a.py", "b.py"], 40));
    expect(r.outcomes.slice(0, 2)).toEqual(["ran", "ran"]);
    expect(levels(r.outcomes.slice(2, 6))).toEqual([1, 1, 2, 2]);
    expect(stopAt(r)).toBe(7);
    expect(r.ran.read_file).toBe(2);
  });

  it("three reads rotated: the run stops by the 9th call", async () => {
    const r = await runScenario(adapter, tools, cycleOf(["a.py", "b.py", "c.py"], 40));
    expect(r.outcomes.slice(0, 3)).toEqual(["ran", "ran", "ran"]);
    expect(stopAt(r)).toBe(9);
  });

  it("harm: reading new files between the repeats is progress; every new read runs and the run goes on", async () => {
    const script = [read("a.py"), read("b.py"), read("a.py"), read("c.py"), read("b.py"), read("d.py"), read("a.py")];
    const r = await runScenario(adapter, tools, script);
    expect(r.outcomes.filter((_, i) => [0, 1, 3, 5].includes(i))).toEqual(["ran", "ran", "ran", "ran"]);
    expect(stopAt(r)).toBeUndefined();
  });
});
