/**
 * Issue 43, class 6 (Qwen Code issue #9450: a task board that other agents keep changing; OpenClaw's own breaker
 * warns at 10 identical calls, blocks at 20 and breaks at 30): the repeat ceiling stopped changing polls of shared
 * state at the 12th call. A call whose answers can change by themselves — an unknown tool that is not a search, a
 * poll, a shell command — now gets the ceiling's `changing` limits: reminded from the 10th identical call; since
 * issue 63 it is blocked only once 19 of its answers in a row were the same (answers that change are progress). A search asked the same question (an LLM-backed `web_search` whose answers differ only in wording) keeps
 * the lower limits (reminded from the 6th, blocked at the 10th; test/scenarios/changing-results.test.ts). Through
 * createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, changing, runScenario, step, stopAt, times } from "./support.js";

const board = changing("task_board", (n) => `open tasks: ${30 - n} (updated by agent-${n % 3})`);
const shell = changing("bash", (n) => `NAME READY STATUS\nworker-${n} 1/1 Running`);
const search = changing("web_search", (n) => `Summary ${n}: LangGraph.js 1.7 adds …`);

describe.each(ADAPTERS)("the repeat ceiling for answers that change, through %s", (adapter) => {
  it("a task board other agents change, polled 19 times: every poll runs, reminded from the 10th", async () => {
    const r = await runScenario(adapter, [board], times(19, step("task_board", {})));
    expect(r.outcomes).toEqual(Array(19).fill("ran"));
    expect(r.answers[8]).not.toMatch(/identical call/);
    expect(r.answers[9]).toMatch(/10th identical call of 'task_board'/);
  });

  it("the same board polled on: never blocked while it answers anew (issue 63: OpenClaw only warns on changing outcomes)", async () => {
    const r = await runScenario(adapter, [board], times(24, step("task_board", {})));
    expect(r.ran.task_board).toBe(24);
    expect(r.answers[19]).toMatch(/20th identical call of 'task_board'/);
    expect(stopAt(r)).toBeUndefined();
  });

  it("a shell command whose output changes each time: every run runs, reminded from the 10th", async () => {
    const r = await runScenario(adapter, [shell], times(22, step("bash", { command: "kubectl get pods" })));
    expect(r.ran.bash).toBe(22);
    expect(r.answers[9]).toContain("[REPEATED CALL]");
  });

  it("a search asked the same question keeps the lower ceiling: blocked at the 10th", async () => {
    const r = await runScenario(adapter, [search], times(12, step("web_search", { query: "langgraph.js release" })));
    expect(r.ran.web_search).toBe(9);
    expect(r.outcomes[9]).toMatch(/^repeat_ceiling@1$/);
  });
});
