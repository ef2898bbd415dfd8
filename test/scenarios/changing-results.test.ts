/**
 * Loops whose results change a little every time (issue 34, items 1 and 2): the guards compare results after a
 * normalizer that drops volatile parts (timestamps, request ids, durations, execution counters, fresh message ids),
 * and an identical call repeated many times in one run is reminded, then blocked, even when its answers keep
 * changing (the repeat ceiling). Progress is never stopped: polls with a wait between them, and polls whose
 * normalized answers move. Each script runs through a createReactAgent with `GuardedToolNode` + `escalationHook`, a
 * createAgent with `guardMiddleware`, and `replayGuards` over its recording.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, type Adapter, changing, type FakeTool, runScenario, same, step, stopAt, times } from "./support.js";

const ran = (n: number) => Array.from({ length: n }, () => "ran");
const REMINDER = "[REPEATED CALL]";

/** A fixed pseudo-random hex id for call `n` (what a server would put in a request id). */
const hexId = (n: number, length = 24) =>
  Array.from({ length }, (_, i) => ((n * 7919 + i * 104729) % 16).toString(16)).join("");
const uuid = (n: number) => {
  const h = hexId(n, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const at = (n: number) => new Date(Date.UTC(2025, 0, 2, 10, 0, 0) + n * 1371).toISOString();

/** An LLM-backed search: the same question summarized in other words on every call. */
const OPENERS = [
  "The latest LangGraph.js release adds",
  "According to the changelog, LangGraph.js now has",
  "Recent versions of LangGraph.js introduce",
  "LangGraph.js's newest version ships",
  "The LangGraph.js team announced",
];
const FEATURES = [
  "durable checkpoints",
  "a prebuilt ReAct agent",
  "custom stream events",
  "interrupts for human review",
  "a functional API",
  "node caching",
  "deferred nodes",
];
const webSearch = changing(
  "web_search",
  (n) =>
    `${OPENERS[n % OPENERS.length]} ${FEATURES[n % FEATURES.length]} and ${FEATURES[(n + 3) % FEATURES.length]}; ` +
    `see the release notes on github.com for ${FEATURES[(n + 5) % FEATURES.length]}.`,
);
const search = step("web_search", { query: "what is new in the latest langgraph.js release" });

/**
 * A status whose JSON differs only in `checked_at` and `request_id` (a job stalled: one that says it still runs is
 * waited for up to the ceiling's 20th identical answer, test/scenarios/polls-by-evidence.test.ts).
 */
const stuckStatus = changing("get_job_status", (n) =>
  JSON.stringify({ job_id: "j-17", status: "stalled", progress: 0.4, checked_at: at(n), request_id: uuid(n) }),
);
const poll = step("get_job_status", { job_id: "j-17" });

describe.each(ADAPTERS)("loops whose results change through %s", (adapter: Adapter) => {
  it("30 identical web_search calls whose LLM summaries differ each time: reminded from the 6th, stopped at the 12th (OpenClaw's generic repeat)", async () => {
    const r = await runScenario(adapter, [webSearch], times(30, search));
    expect(r.outcomes).toEqual([...ran(9), "repeat_ceiling@1", "repeat_ceiling@2", "stop"]);
    expect(stopAt(r)).toBeLessThanOrEqual(12);
    expect(r.ran.web_search).toBe(9);
    // The reminder comes after the tool's own result, from the 6th identical call.
    expect(r.answers.slice(0, 5).some((a) => a.includes(REMINDER))).toBe(false);
    r.answers.slice(5, 9).forEach((answer, i) => {
      expect(answer.startsWith(webSearch.respond(6 + i, {}))).toBe(true);
      expect(answer).toContain(`${REMINDER} This was the ${6 + i}th identical call of 'web_search' in this run`);
    });
    expect(r.answers[9]).toMatch(/^⚠️ SAME CALL TOO OFTEN: Tool 'web_search' was already called 9 times/);
    expect(r.answers[9]).toContain("Previous result for this exact call:");
    expect(r.answers[9]).toContain("- It was already called 9 times with these arguments in this run");
  });

  it("30 get_job_status calls whose JSON differs only in checked_at and request_id: the 3rd is blocked, stopped by the 8th (LangChain PR #36912's normalized outputs)", async () => {
    const r = await runScenario(adapter, [stuckStatus], times(30, poll));
    expect(r.outcomes).toEqual(["ran", "ran", "consecutive@1", "consecutive@2", "stop"]);
    expect(stopAt(r)).toBeLessThanOrEqual(8);
    expect(r.ran.get_job_status).toBe(2);
    // The feedback quotes the latest answer exactly as the tool gave it.
    expect(r.answers[2]).toContain(`"request_id":"${uuid(2)}"`);
  });

  it("the same execute_code probe whose output differs only in Out[n] and the execution time: not run by its 4th call (the 147-run incident report)", async () => {
    const probe = changing(
      "execute_code",
      (n) => `Out[${n + 6}]: (1024, 768)\n(execution took 0.${800 + ((n * 37) % 100)}s)`,
    );
    const r = await runScenario(adapter, [probe], times(6, step("execute_code", { code: "img.shape" })));
    expect(r.outcomes.slice(0, 4)).toEqual(["ran", "ran", "consecutive@1", "consecutive@2"]);
    expect(r.ran.execute_code).toBe(2);
    // Result dedupe still needs exact equality: the 2nd output differs, so the model reads it whole.
    expect(r.answers[1]).toBe(probe.respond(2, {}));
    expect(r.answers[1]).not.toMatch(/^Unchanged/);
  });

  it("a send/poll pair whose results carry a fresh message id each time: all run, never a cycle (issue 63: OpenClaw #89090 sends anew)", async () => {
    const message: FakeTool = {
      name: "message",
      respond: (n, args) =>
        JSON.stringify(
          args.action === "send"
            ? {
                ok: true,
                channel: "feishu",
                chatId: "oc_chat",
                runId: `run_${n}`,
                messageId: `om_${n}`,
                receipt: { platformMessageId: `p_${n}` },
              }
            : { ok: true, channel: "telegram", messageId: `om_${n}`, chatId: "c1", pollId: `pl_${n}` },
          null,
          2,
        ),
    };
    const send = step("message", { action: "send", target: "feishu:oc_chat", text: "ping" });
    const ask = step("message", { action: "poll", target: "tg:chat-1", question: "Still there?" });
    const script = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? send : ask));
    const r = await runScenario(adapter, [message], script);
    // Each answer is exactly new (a message sent again), so no round repeats the one before it.
    expect(r.outcomes).toEqual(ran(30));
    expect(stopAt(r)).toBeUndefined();
  });

  it("a job polled 40 times with a wait between polls and real progress in each answer runs every poll", async () => {
    const job = changing("get_job_status", (n) =>
      JSON.stringify({
        job_id: "j-17",
        status: n < 40 ? "running" : "done",
        done_steps: n,
        total_steps: 40,
        checked_at: at(n),
        request_id: uuid(n),
      }),
    );
    const wait = step("sleep", { seconds: 30 });
    const script = Array.from({ length: 79 }, (_, i) => (i % 2 === 0 ? poll : wait));
    const r = await runScenario(adapter, [job, same("sleep", "Slept 30 s.")], script);
    expect(r.outcomes).toEqual(ran(79));
    expect(r.ran).toEqual({ get_job_status: 40, sleep: 39 });
    expect(r.strikes).toBe(0);
    expect(r.answers.some((a) => a.includes(REMINDER))).toBe(false);
  });

  it("a job polled 40 times back to back whose normalized answers show progress every time runs every poll", async () => {
    const job = changing("get_job_status", (n) =>
      JSON.stringify({
        job_id: "j-17",
        status: "running",
        progress: `${n}/40`,
        checked_at: at(n),
        request_id: uuid(n),
      }),
    );
    const r = await runScenario(adapter, [job], times(40, poll));
    expect(r.outcomes).toEqual(ran(40));
    expect(r.answers.some((a) => a.includes(REMINDER))).toBe(false);
  });

  it("a poll whose args wait (a long poll) is not counted: 30 run", async () => {
    const longPoll = step("web_search", { query: "langgraph.js release", wait_seconds: 60 });
    const r = await runScenario(adapter, [webSearch], times(30, longPoll));
    expect(r.outcomes).toEqual(ran(30));
  });

  it("the ceiling's switches: exempt, tools.<name>.repeatCeiling false, rules.repeatCeiling false", async () => {
    for (const options of [
      { tools: { web_search: { exempt: true } } },
      { tools: { web_search: { repeatCeiling: false as const } } },
      { rules: { repeatCeiling: false as const } },
    ]) {
      const r = await runScenario(adapter, [webSearch], times(30, search), options);
      expect(r.outcomes).toEqual(ran(30));
      expect(r.answers.some((a) => a.includes(REMINDER))).toBe(false);
    }
  });

  it("the ceiling's limits, globally and per tool: remindAt 2, blockAt 4", async () => {
    for (const options of [
      { rules: { repeatCeiling: { remindAt: 2, blockAt: 4 } } },
      { tools: { web_search: { repeatCeiling: { remindAt: 2, blockAt: 4 } } } },
    ]) {
      const r = await runScenario(adapter, [webSearch], times(10, search), options);
      expect(r.outcomes).toEqual([...ran(3), "repeat_ceiling@1", "repeat_ceiling@2", "stop"]);
      expect(r.answers.map((a) => a.includes(REMINDER))).toEqual([false, true, true, false, false]);
    }
  });

  it("normalizeResult false compares exact results (the status loop runs on); a function replaces the normalizer", async () => {
    for (const options of [
      { rules: { normalizeResult: false } },
      { tools: { get_job_status: { normalizeResult: false } } },
    ]) {
      const r = await runScenario(adapter, [stuckStatus], times(12, poll), options);
      expect(r.outcomes).toEqual(ran(12));
    }
    const dropIds = (text: string) => text.replace(/"(checked_at|request_id)":"[^"]*"/g, "");
    const custom = await runScenario(adapter, [stuckStatus], times(12, poll), {
      rules: { normalizeResult: false },
      tools: { get_job_status: { normalizeResult: dropIds } },
    });
    expect(custom.outcomes).toEqual(["ran", "ran", "consecutive@1", "consecutive@2", "stop"]);
  });

  it("observe mode reminds nothing and records the would-be block", async () => {
    const r = await runScenario(adapter, [webSearch], times(12, search), { mode: "observe" });
    expect(r.outcomes).toEqual(ran(12));
    expect(r.answers.some((a) => a.includes(REMINDER))).toBe(false);
    expect(r.toolGuard.observed.map((o) => o.rule)).toEqual(["repeat_ceiling", "repeat_ceiling", "repeat_ceiling"]);
  });
});

describe("loops whose results change: the adapters agree", () => {
  it("every adapter gives the same outcomes and answers for the web_search loop", async () => {
    const [first, ...others] = await Promise.all(ADAPTERS.map((a) => runScenario(a, [webSearch], times(30, search))));
    for (const other of others) {
      expect(other.outcomes).toEqual(first?.outcomes);
      expect(other.answers).toEqual(first?.answers);
    }
  });
});
