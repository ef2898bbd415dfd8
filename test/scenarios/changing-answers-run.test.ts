/**
 * Issue 63, "Why 3": identical calls whose answers keep changing were stopped by count (the repeat ceiling blocked the
 * 20th, escalation ended the run at the 22nd; a send/poll ping-pong whose outputs progress at the 7th). OpenClaw, whose
 * thresholds the docs cite, only warns on changing outcomes and never blocks (Qwen Code #9450 is the incident). Now
 * answers that keep changing (after normalizing) are never blocked or stopped by count: reminders from the 10th
 * identical call, the run's budgets end such runs. Searches and delegations (a question asked again is waste) keep
 * the ceiling's count, and so does a per-tool `repeatCeiling` the user set. Through createAgent, createReactAgent and
 * replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, changing, type FakeTool, runScenario, step, stopAt, times } from "./support.js";

const REMINDER = "[REPEATED CALL]";
// Replay reports a call that ran as "ran" whatever it returned; the live agents say "failed".
const ran = (outcomes: string[]) => outcomes.map((o) => (o === "failed" ? "ran" : o));
const all = (n: number) => Array.from({ length: n }, () => "ran");

/** Every call ran, the run was not stopped, and the reminders came from the 10th call on. */
function expectRunsWithReminders(r: { outcomes: string[]; answers: string[]; strikes: number }, n: number) {
  expect(ran(r.outcomes)).toEqual(all(n));
  expect(r.strikes).toBe(0);
  expect(r.answers.slice(0, 9).some((a) => a.includes(REMINDER))).toBe(false);
  expect(r.answers[9]).toContain(REMINDER);
  expect(r.answers[19]).toContain(REMINDER);
}

const message: FakeTool = {
  name: "message",
  respond: (n, args) =>
    JSON.stringify(
      args.action === "send"
        ? { ok: true, channel: "feishu", chatId: "oc_chat", runId: `run_${n}`, messageId: `om_${n}` }
        : { ok: true, channel: "telegram", messageId: `om_${n}`, chatId: "c1", pollId: `pl_${n}` },
    ),
};

describe.each(ADAPTERS)("answers that keep changing are never stopped by count, through %s", (adapter) => {
  it("date +%s 30 times, a new tick each time: every call runs, reminded at the 10th and 20th", async () => {
    const date = changing("bash", (n) => `${1764661932 + n}\n`);
    const r = await runScenario(adapter, [date], times(30, step("bash", { command: "date +%s" })));
    expectRunsWithReminders(r, 30);
  });

  it("a flaky helper printing its failure with a new attempt number 30 times: every call runs", async () => {
    // A shell answers a failing command's output and exit code (a failure the tool itself threw is another rule's).
    const flaky = changing("bash", (n) => `attempt ${n} failed: lock busy\n[exit code 1]`);
    const r = await runScenario(adapter, [flaky], times(30, step("bash", { command: "./scripts/sync.sh" })));
    expectRunsWithReminders(r, 30);
  });

  it("task_board {} polled 25 times while other agents change it: every poll runs (Qwen Code #9450)", async () => {
    const board = changing("task_board", (n) => `open tasks: ${30 - n} (updated by agent-${n % 3})`);
    const r = await runScenario(adapter, [board], times(25, step("task_board")));
    expectRunsWithReminders(r, 25);
  });

  it("a send/poll ping-pong whose outputs progress (fresh message ids): all 30 run (OpenClaw #89090)", async () => {
    const send = step("message", { action: "send", target: "feishu:oc_chat", text: "ping" });
    const ask = step("message", { action: "poll", target: "tg:chat-1", question: "Still there?" });
    const r = await runScenario(
      adapter,
      [message],
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? send : ask)),
    );
    expect(r.outcomes).toEqual(all(30));
    expect(stopAt(r)).toBeUndefined();
  });

  it("a delegation asked the same question 12 times, answered in other words: blocked at the 10th, stopped by the 12th", async () => {
    const task = changing("task", (n) => `Summary ${n}: the auth module ${n % 2 ? "checks" : "verifies"} tokens …`);
    const r = await runScenario(adapter, [task], times(12, step("task", { description: "summarize the auth module" })));
    expect(r.answers[5]).toContain(REMINDER);
    expect(r.outcomes[9]).toBe("repeat_ceiling@1");
    expect(r.ran.task).toBe(9);
    expect(stopAt(r)).toBeLessThanOrEqual(12);
  });

  it("a per-tool repeatCeiling the user set still counts calls: blocked at its 4th", async () => {
    const board = changing("task_board", (n) => `open tasks: ${30 - n}`);
    const options = { tools: { task_board: { repeatCeiling: { remindAt: 2, blockAt: 4 } } } };
    const r = await runScenario(adapter, [board], times(5, step("task_board")), options);
    expect(r.outcomes.slice(0, 4)).toEqual([...all(3), "repeat_ceiling@1"]);
  });
});
