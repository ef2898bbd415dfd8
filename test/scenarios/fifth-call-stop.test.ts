/**
 * Issue 43, class 8: a run stopped at the 4th identical call, earlier than every peer. Cline, Qwen Code and deer-flow
 * stop a repeated call at the 5th, OpenRouter's agent at the 6th, crush at more than 5 in 10. Blocks at the 2nd and
 * 3rd call are fine — the call does not run — but asking a person or ending the run that early is not. Now the
 * escalation holds at level 2 until the 5th identical call (`escalation.askFrom`, default 5): a read repeated forever
 * runs once, is blocked from the 2nd call, asks a person at the 5th and ends at the 6th. A poll judged by its results
 * (two runs before the first block) keeps its schedule: strike 3 is its 5th call. `askFrom: 1` gives seed 003's pace.
 * Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, runScenario, same, step, stopAt, times } from "./support.js";

const read = step("read_file", { path: "config.py" });
const poll = step("get_job_status", { id: "j1" });
// A status that does not say the job still runs (issue 63: a "running" one is waited for, up to OpenClaw's 20).
const tools = [same("read_file", "DEBUG = True\n"), same("get_job_status", '{"status": "paused"}')];
const rule = (o: string) => o.replace(/^[a-z_]+@/, "blocked@");

describe.each(ADAPTERS)("no stop before the 5th identical call, through %s", (adapter) => {
  it("a read repeated: blocked from the 2nd call, level 2 held at the 4th, the run stops at the 5th", async () => {
    const r = await runScenario(adapter, tools, times(8, read));
    expect(r.outcomes.slice(0, 4).map(rule)).toEqual(["ran", "blocked@1", "blocked@2", "blocked@2"]);
    expect(r.ran.read_file).toBe(1); // the loop's calls stopped running at the 2nd
    expect(stopAt(r)).toBe(5);
    if (adapter !== "replayGuards") expect(r.interrupt).toMatchObject({ level: 3, tool: "read_file" });
  });

  it("a poll that answers the same: runs twice, blocked from the 3rd, the run stops at the 5th (as before)", async () => {
    const r = await runScenario(adapter, tools, times(8, poll));
    expect(r.outcomes.slice(0, 4).map(rule)).toEqual(["ran", "ran", "blocked@1", "blocked@2"]);
    expect(stopAt(r)).toBe(5);
  });

  it("askFrom: 1 keeps seed 003's pace: a person is asked at the third blocked duplicate (the 4th call)", async () => {
    const r = await runScenario(adapter, tools, times(8, read), { escalation: { askFrom: 1 } });
    expect(r.outcomes.slice(0, 3).map(rule)).toEqual(["ran", "blocked@1", "blocked@2"]);
    expect(stopAt(r)).toBe(4);
  });
});
