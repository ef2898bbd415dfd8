/**
 * The repeat ceiling in the core (issue 34, item 2): an identical call repeated in one run is reminded from
 * `remindAt` and blocked at `blockAt` whatever it answers; what restarts the count (a change made by a call new in
 * the run, a wait, a poll whose normalized answer moved, someone else's change, a new run, a person's reset), what
 * is never counted (a call whose arguments wait), the bounds, the options, observe mode, the per-run switch, the
 * stream events and the feedback. Also: the rules compare normalized results, result dedupe exact ones.
 */
import { describe, expect, it } from "vitest";
import {
  BLOCK_RULES,
  emptyToolGuardState,
  GuardOptionsError,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolCallInput,
  type ToolGuardOptions,
  type ToolGuardState,
  turnStreamEvents,
} from "../../src/core/index.js";
import type { ToolCallDecision } from "../../src/tool-calls/core/decide.js";
import { unchangedNote } from "../../src/tool-calls/core/earlier.js";
import { commitTurn, planTurn } from "../../src/tool-calls/core/plan.js";
import { REPEATS_LIMIT } from "../../src/tool-calls/core/repeat-ceiling.js";

let ids = 0;
const call = (name: string, args: Record<string, unknown> = {}): ToolCallInput => ({ name, args, id: `c${++ids}` });
const search = () => call("web_search", { query: "langgraph" });

/** A thread driven response by response; `answer(call, n)` is what the n-th call (1-based) of the thread returns. */
function thread(
  given: ToolGuardOptions = {},
  answer: (c: ToolCallInput, n: number) => string = (_c, n) => `answer ${n}`,
) {
  const options = resolveToolGuardOptions({ escalation: { enabled: false }, ...given });
  let state: ToolGuardState = emptyToolGuardState();
  let run = "h0";
  let n = 0;
  return {
    options,
    get state() {
      return state;
    },
    set state(s: ToolGuardState) {
      state = s;
    },
    newRun(marker: string) {
      run = marker;
    },
    respond(calls: ToolCallInput[], ctx: { disabled?: boolean } = {}): ToolCallDecision[] {
      const plan = planTurn(state, { id: `m${++ids}`, text: "", calls, run }, options, ctx);
      const outcomes = plan.decisions.map((d) => (d.allowed ? { ok: true, text: answer(d.call, ++n) } : undefined));
      state = reduceToolGuard(state, plan.stop ? plan.stop.events : commitTurn(plan, outcomes, options));
      return plan.decisions;
    },
  };
}

/** One response per call; the fate of each: "ran", "ran+reminder", or the blocking rule. */
function fates(t: ReturnType<typeof thread>, calls: ToolCallInput[], ctx: { disabled?: boolean } = {}): string[] {
  return calls.map((c) => {
    const [d] = t.respond([c], ctx) as [ToolCallDecision];
    if (!d.allowed) return d.rule ?? "blocked";
    return d.repeats?.reminder === undefined ? "ran" : "ran+reminder";
  });
}

const times = (n: number, make: (i: number) => ToolCallInput) => Array.from({ length: n }, (_, i) => make(i));
const ran = (n: number) => Array.from({ length: n }, () => "ran");
const reminded = (n: number) => Array.from({ length: n }, () => "ran+reminder");

describe("the repeat ceiling", () => {
  it("is a block rule like the others: enumerated, counted per rule", () => {
    expect(BLOCK_RULES).toContain("repeat_ceiling");
    expect(emptyToolGuardState().stats.blocked.repeat_ceiling).toBe(0);
    const t = thread();
    fates(t, times(10, search));
    expect(t.state.stats.blocked.repeat_ceiling).toBe(1);
    expect(t.state.observed.at(-1)).toMatchObject({ tool: "web_search", rule: "repeat_ceiling", count: 10 });
  });

  it("reminds from the 6th identical call, blocks the 10th and every later one in the run", () => {
    const t = thread();
    expect(fates(t, times(12, search))).toEqual([...ran(5), ...reminded(4), ...Array(3).fill("repeat_ceiling")]);
    // The latest answer and the answers equal to it in a row ("answer 9": one) are kept with the count.
    expect(t.state.repeats?.calls).toEqual([
      { key: expect.any(String), tool: "web_search", calls: 9, mark: 1, last: expect.any(String), same: 1 },
    ]);
  });

  it("escalates like any block: 1, 2, then a person is asked", () => {
    const t = thread({ escalation: { enabled: true } });
    fates(t, times(9, search));
    const levels = times(3, search).map((c) => t.respond([c])[0]?.escalation);
    expect(levels).toEqual([1, 2, 3]);
  });

  it("restarts after a change made by a call new in the run: test re-runs after each new edit never add up", () => {
    const t = thread({ rules: { repeatCeiling: { remindAt: 2, blockAt: 3 } } });
    const test = () => call("bash", { command: "python reproduce_issue.py" });
    const edit = (i: number) => call("bash", { command: `sed -i 's/v${i}/v${i + 1}/' fix.py` });
    expect(
      fates(
        t,
        times(20, (i) => (i % 2 === 0 ? test() : edit(i))),
      ),
    ).toEqual(ran(20));
  });

  it("a change repeated is no new change: a send/poll pair adds up, reminded but not blocked while it answers anew", () => {
    // Issue 63: send_message's answers change every time ("answer n"): reminded from its 10th call, never blocked.
    const t = thread();
    const send = () => call("send_message", { to: "ops", text: "ping" });
    const check = () => call("read_inbox", { folder: "ops" });
    const script = times(48, (i) => (i % 2 === 0 ? send() : check()));
    expect(fates(t, script).filter((_, i) => i % 2 === 0)).toEqual([...ran(9), ...reminded(15)]);
  });

  it("answers that change are never blocked by count; 19 equal answers in a row block the 20th (issue 63)", () => {
    const board = () => call("task_board");
    expect(fates(thread(), times(30, board))).toEqual([...ran(9), ...reminded(21)]);
    const running = thread({}, () => '{"status": "running"}'); // still running: no rule but the ceiling blocks it
    const poll = () => call("get_job_status", { id: "j1" });
    expect(fates(running, times(22, poll))).toEqual([...ran(9), ...reminded(10), ...Array(3).fill("repeat_ceiling")]);
  });

  it("restarts after a wait, and never counts a call that waits (by name or arguments)", () => {
    const t = thread({ rules: { repeatCeiling: { remindAt: 2, blockAt: 3 } } });
    const wait = () => call("sleep", { seconds: 5 });
    expect(
      fates(
        t,
        times(12, (i) => (i % 2 === 0 ? search() : wait())),
      ),
    ).toEqual(ran(12));
    expect(
      fates(
        t,
        times(6, () => call("web_search", { query: "x", wait_seconds: 30 })),
      ),
    ).toEqual(ran(6));
    expect(
      fates(
        t,
        times(6, () => call("web_search", { query: "x", waitMs: 0 })),
      ),
    ).toEqual(["ran", "ran+reminder", ...Array(4).fill("repeat_ceiling")]);
  });

  it("a poll whose normalized answer moves restarts; one whose answer only changes in volatile parts adds up", () => {
    // The consecutive and threshold rules would stop the stuck poll sooner: left out to show the ceiling alone.
    const options = {
      repetitionThreshold: 50,
      rules: { repeatCeiling: { remindAt: 3, blockAt: 5 } },
      tools: { get_job_status: { consecutive: false } },
    };
    const moving = thread(options, (_c, n) => `{"status": "running", "done": ${n}, "checked_at": "2025-01-0${n % 9}"}`);
    expect(
      fates(
        moving,
        times(12, () => call("get_job_status", { id: "j1" })),
      ),
    ).toEqual(ran(12));
    const stuck = thread(
      options,
      (_c, n) => `{"status": "running", "checked_at": "2025-01-0${(n % 9) + 1}T10:00:00Z"}`,
    );
    expect(
      fates(
        stuck,
        times(6, () => call("get_job_status", { id: "j1" })),
      ),
    ).toEqual([...ran(2), ...reminded(2), "repeat_ceiling", "repeat_ceiling"]);
  });

  it("restarts after someone else's change, at a new run and after a person's reset", () => {
    const t = thread({ rules: { repeatCeiling: { remindAt: 3, blockAt: 4 } } });
    fates(t, times(3, search));
    t.state = reduceToolGuard(t.state, [{ type: "external", effect: { kind: "mutate" } }]);
    expect(fates(t, times(3, search))).toEqual([...ran(2), "ran+reminder"]);
    t.newRun("h1");
    expect(fates(t, times(3, search))).toEqual([...ran(2), "ran+reminder"]);
    expect(fates(t, [search()])).toEqual(["repeat_ceiling"]);
    t.state = reduceToolGuard(t.state, [{ type: "forgive" }]);
    expect(t.state.repeats).toEqual({ mark: 0, calls: [] });
    expect(fates(t, [search()])).toEqual(["ran"]);
  });

  it("keeps at most REPEATS_LIMIT calls, the most recently made last", () => {
    const t = thread();
    fates(
      t,
      times(60, (i) => call("web_search", { query: `q${i}` })),
    );
    expect(t.state.repeats?.calls).toHaveLength(REPEATS_LIMIT);
    expect(t.state.repeats?.calls.at(-1)?.calls).toBe(1);
  });

  it("with the ceiling off nothing is kept; a tool's own limits turn it on for that tool alone", () => {
    const off = thread({ rules: { repeatCeiling: false } });
    expect(fates(off, times(12, search))).toEqual(ran(12));
    expect(off.state.repeats).toBeUndefined();
    const own = thread({
      rules: { repeatCeiling: false },
      tools: { web_search: { repeatCeiling: { remindAt: false, blockAt: 3 } } },
    });
    expect(fates(own, times(3, search))).toEqual([...ran(2), "repeat_ceiling"]);
    expect(
      fates(
        own,
        times(12, () => call("other_tool", { q: 1 })),
      ),
    ).toEqual(ran(12));
  });

  it("observe mode reminds nothing and records the would-be blocks; the per-run switch only counts", () => {
    const observe = thread({ mode: "observe" });
    expect(fates(observe, times(11, search))).toEqual(ran(11));
    expect(observe.state.observed.map((o) => o.rule)).toEqual(["repeat_ceiling", "repeat_ceiling"]);
    const off = thread();
    expect(fates(off, times(11, search), { disabled: true })).toEqual(ran(11));
    expect(off.state.repeats?.calls[0]?.calls).toBe(11);
  });

  it("the stream events: a near-miss with the reminder, a blocked event with the rule", () => {
    const t = thread();
    const decided = times(10, search).map((c) => t.respond([c])[0] as ToolCallDecision);
    const events = turnStreamEvents(decided);
    const ceiling = events.filter((e) => e.rule === "repeat_ceiling");
    expect(ceiling.map((e) => `${e.kind}:${e.rule}:${e.count}`)).toEqual([
      "near-miss:repeat_ceiling:6",
      "near-miss:repeat_ceiling:7",
      "near-miss:repeat_ceiling:8",
      "near-miss:repeat_ceiling:9",
      "blocked:repeat_ceiling:10",
    ]);
    expect(ceiling[0]?.message).toMatch(/^\[REPEATED CALL\] This was the 6th identical call of 'web_search'/);
  });

  it("the feedback: the rule's message (replaceable), the latest answer, the reasons", () => {
    const t = thread({ feedback: { messages: { repeat_ceiling: ({ tool, count }) => `No: ${tool} #${count}.` } } });
    const [d] = times(10, search)
      .map((c) => t.respond([c])[0])
      .slice(-1);
    expect(d?.message).toBe("No: web_search #10.");
    expect(d?.content).toContain("Previous result for this exact call:\nanswer 9\n");
    expect(d?.content).toContain("- It was already called 9 times with these arguments in this run\n");
  });
});

describe("rules.repeatCeiling options", () => {
  it("defaults to remind at 6, block at 10, and 10/20 for answers that change; false switches it off; validated strictly", () => {
    expect(resolveToolGuardOptions().rules.repeatCeiling).toEqual({
      remindAt: 6,
      blockAt: 10,
      changing: { remindAt: 10, blockAt: 20 },
    });
    expect(resolveToolGuardOptions({ rules: { repeatCeiling: false } }).rules.repeatCeiling).toBe(false);
    // Limits given without `changing` apply to every call.
    expect(resolveToolGuardOptions({ rules: { repeatCeiling: { blockAt: 20 } } }).rules.repeatCeiling).toEqual({
      remindAt: 6,
      blockAt: 20,
      changing: { remindAt: 6, blockAt: 20 },
    });
    expect(
      resolveToolGuardOptions({ rules: { repeatCeiling: { changing: { blockAt: 30 } } } }).rules.repeatCeiling,
    ).toEqual({ remindAt: 6, blockAt: 10, changing: { remindAt: 10, blockAt: 30 } });
    expect(resolveToolGuardOptions({ tools: { t: { repeatCeiling: false } } }).tools.t?.repeatCeiling).toBe(false);
    for (const [bad, message] of [
      [{ rules: { repeatCeiling: { remindAt: 10, blockAt: 10 } } }, /rules\.repeatCeiling\.remindAt: remindAt \(10\)/],
      [{ rules: { repeatCeiling: { blockAt: 0 } } }, /rules\.repeatCeiling\.blockAt: expected an integer ≥ 1/],
      [{ rules: { repeatCeiling: { blockAt: 3, every: 2 } } }, /rules\.repeatCeiling/],
      [{ rules: { repeatCeiling: true } }, /rules\.repeatCeiling: expected \{ remindAt, blockAt, changing \} or false/],
      [{ rules: { repeatCeiling: { changing: { remindAt: 20, blockAt: 20 } } } }, /rules\.repeatCeiling\.changing/],
      [{ tools: { t: { repeatCeiling: { remindAt: 1.5 } } } }, /tools\.t\.repeatCeiling\.remindAt/],
    ] as const) {
      expect(() => resolveToolGuardOptions(bad as never)).toThrow(GuardOptionsError);
      expect(() => resolveToolGuardOptions(bad as never)).toThrow(message);
    }
  });
});

describe("normalized results in the rules, exact ones in result dedupe", () => {
  it("records the normalized digest for the rules, and the exact one for dedupe when the text had volatile parts", () => {
    const output = (n: number) => `Out[${n}]: ${"42 ".repeat(100)}(execution took 0.8${n}s)`;
    const t = thread({}, (_c, n) => output(n));
    t.respond([call("execute_code", { code: "6*7" })]);
    const [record] = t.state.repetition.window;
    expect(record?.result?.exact).toBeDefined();
    expect(record?.result?.digest).not.toBe(record?.result?.exact);
    expect(t.state.answers?.[0]?.digest).toBe(record?.result?.exact);
    // A result that differs only in volatile parts is no "unchanged" result.
    const outcome = { ok: true, text: output(2) };
    const key = t.state.repetition.window[0]?.key as string;
    expect(
      unchangedNote(t.state, { key, tool: "execute_code", id: "x" }, outcome, t.options, () => true),
    ).toBeUndefined();
    const same = { ok: true, text: output(1) };
    expect(unchangedNote(t.state, { key, tool: "execute_code", id: "x" }, same, t.options, () => true)).toMatch(
      /^Unchanged/,
    );
  });

  it("a text without volatile parts records one digest", () => {
    const t = thread({}, () => "plain answer");
    t.respond([call("execute_code", { code: "6*7" })]);
    expect(t.state.repetition.window[0]?.result?.exact).toBeUndefined();
  });

  it("a normalizer that throws or returns no string leaves the text as it is", () => {
    for (const normalizeResult of [
      () => {
        throw new Error("boom");
      },
      () => 42 as unknown as string,
    ]) {
      const t = thread({ rules: { normalizeResult } }, (_c, n) => `took 0.${n}s`);
      t.respond([call("execute_code", { code: "x" })]);
      expect(t.state.repetition.window[0]?.result?.exact).toBeUndefined();
    }
  });
});
