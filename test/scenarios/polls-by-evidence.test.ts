/**
 * Issue 63, "Why 2": a poll whose answer did not change twice was blocked, and the run stopped before the job ended.
 * `gh run view 4242 --json status` answering queued, in_progress, in_progress had its 4th poll (which answers
 * `completed`) blocked; `list_background_agents {}` polled while a research agent runs (docker-agent exempts exactly
 * this tool after a production incident) was blocked at the 2nd call and stopped at the 5th. Now a poll whose latest
 * answer says the job still runs is never blocked on equal answers: only OpenClaw's `poll_no_progress` figures end it
 * (a reminder from the 10th identical answer, a block at the 20th). A poll whose answers changed by themselves in this
 * run (no arguments, or only an id) is judged by its answers. A poll whose answer says nothing runs keeps today's stop
 * at the 5th (octo-agent's status-poll stop). Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, type FakeTool, runScenario, same, sequence, step, stopAt, times } from "./support.js";

const ran = (n: number) => Array.from({ length: n }, () => "ran");
const REMINDER = "[REPEATED CALL]";

/** A shell whose `gh run view` answers the run's status in turn; `gh workflow run` starts the run. */
function gh(): FakeTool {
  const states = ["queued", "in_progress", "in_progress", "completed"];
  let polls = 0;
  return {
    name: "bash",
    respond: (_n, args) =>
      String(args.command).startsWith("gh workflow run")
        ? "Created workflow_dispatch event for ci.yml at main"
        : JSON.stringify({ status: states[Math.min(polls++, states.length - 1)] }),
  };
}
const start = step("bash", { command: "gh workflow run ci.yml" });
const view = step("bash", { command: "gh run view 4242 --json status" });

describe.each(ADAPTERS)("polls judged by what they answer, through %s", (adapter) => {
  it("gh run view answering queued, in_progress, in_progress, completed: all 4 polls run, no strike", async () => {
    for (const options of [{}, { tools: { bash: { stateful: true } } }]) {
      const r = await runScenario(adapter, [gh()], [start, ...times(4, view)], options);
      expect(r.outcomes).toEqual(ran(5));
      expect(r.answers[4]).toContain("completed");
      expect(r.strikes).toBe(0);
      expect(stopAt(r)).toBeUndefined();
    }
  });

  it("list_background_agents {} answering 'researcher: running' 6 times, then 'completed': all 7 run (docker-agent)", async () => {
    const agents = sequence("list_background_agents", [
      ...Array(6).fill("researcher: running"),
      "researcher: completed",
    ]);
    const r = await runScenario(adapter, [agents], times(7, step("list_background_agents")));
    expect(r.outcomes).toEqual(ran(7));
    expect(r.answers[6]).toContain("researcher: completed");
    expect(r.strikes).toBe(0);
  });

  it("a poll answering 'running' forever: reminded from the 10th, blocked at the 20th, stopped (OpenClaw's poll_no_progress)", async () => {
    const job = same("get_job_status", JSON.stringify({ status: "running" }));
    const r = await runScenario(adapter, [job], times(25, step("get_job_status", { job_id: "j-7" })));
    expect(r.outcomes.slice(0, 19)).toEqual(ran(19));
    expect(r.ran.get_job_status).toBe(19);
    expect(r.answers.slice(0, 9).some((a) => a.includes(REMINDER))).toBe(false);
    expect(r.answers[9]).toContain(REMINDER);
    expect(r.outcomes[19]).toBe("repeat_ceiling@1");
    expect(stopAt(r)).toBeLessThanOrEqual(23);
  });

  it("a poll by its shape (no arguments) whose answers moved by themselves is judged by its answers", async () => {
    const notes = ["researcher: running", "researcher: 3 notes written", "researcher: 5 notes written"];
    const agents = sequence("list_background_agents", notes);
    const r = await runScenario(adapter, [agents], times(5, step("list_background_agents")));
    // The 3rd is no read of an unchanged scope: its answers moved by themselves; two equal answers block the 5th.
    expect(r.outcomes).toEqual([...ran(4), "consecutive@1"]);
  });

  it("inverse: get_inbox {} answering 'No new messages' keeps today's stop at the 5th (octo-agent's 5)", async () => {
    const r = await runScenario(adapter, [same("get_inbox", "No new messages")], times(8, step("get_inbox")));
    expect(r.ran.get_inbox).toBe(1);
    expect(r.outcomes[1]).toMatch(/@1$/);
    expect(stopAt(r)).toBe(5);
  });
});
