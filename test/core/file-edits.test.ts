/**
 * The file-edits rule in the core: what counts as a write of a file (successful calls, once per file per call),
 * the per-run counts and their bounds, the options, the exemptions, states saved before the rule, parallel writes
 * in one response, observe mode, and the stream events.
 */
import { describe, expect, it } from "vitest";
import {
  BLOCK_RULES,
  emptyToolGuardState,
  FILE_EDITS_LIMIT,
  fileEditsReminder,
  GuardOptionsError,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolCallInput,
  type ToolGuardOptions,
  type ToolGuardState,
  turnStreamEvents,
} from "../../src/core/index.js";
import type { ToolCallDecision } from "../../src/tool-calls/core/decide.js";
import { commitTurn, planTurn } from "../../src/tool-calls/core/plan.js";

let ids = 0;
const write = (path: string, content = `v${++ids}`, tool = "write_file"): ToolCallInput => ({
  name: tool,
  args: { path, content },
  id: `c${++ids}`,
});
const sh = (command: string): ToolCallInput => ({ name: "bash", args: { command }, id: `c${++ids}` });

/** The issue's limits for every write (rewrites are not limited apart here: see "whole-file rewrites"). */
const ISSUE_LIMITS = { remindAt: 8, blockAt: 12, blockRewritesAt: false as const };

/**
 * A thread driven response by response: each response's calls are planned, run (`ok`) and committed; with the
 * issue's limits unless `given.rules.fileEdits` says otherwise.
 */
function thread(given: ToolGuardOptions = {}) {
  const options = resolveToolGuardOptions({ ...given, rules: { fileEdits: ISSUE_LIMITS, ...given.rules } });
  let state: ToolGuardState = emptyToolGuardState();
  let run = "h0";
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
    respond(calls: ToolCallInput[], ok = true, text = ""): ToolCallDecision[] {
      const plan = planTurn(state, { id: `m${++ids}`, text, calls, run }, options);
      const outcomes = plan.decisions.map((d) =>
        d.allowed ? { ok, text: ok ? "Wrote it." : "Error: disk full" } : undefined,
      );
      state = reduceToolGuard(state, plan.stop ? plan.stop.events : commitTurn(plan, outcomes, options));
      return plan.decisions;
    },
  };
}

/** One response per call; the fate of each: "ran", "ran+reminder", or the blocking rule. */
function fates(t: ReturnType<typeof thread>, calls: ToolCallInput[], ok = true): string[] {
  return calls.map((c) => {
    const [d] = t.respond([c], ok) as [ToolCallDecision];
    if (!d.allowed) return d.rule ?? "blocked";
    return d.fileEdits?.reminder === undefined ? "ran" : "ran+reminder";
  });
}

const times = (n: number, make: (i: number) => ToolCallInput) => Array.from({ length: n }, (_, i) => make(i));
const ran = (n: number) => Array.from({ length: n }, () => "ran");
const reminded = (n: number) => Array.from({ length: n }, () => "ran+reminder");

describe("the file-edits rule", () => {
  it("is a block rule like the others: enumerated, counted per rule, with its own message", () => {
    expect(BLOCK_RULES).toContain("file_edits");
    expect(emptyToolGuardState().stats.blocked.file_edits).toBe(0);
    const t = thread();
    fates(
      t,
      times(12, () => write("a.py")),
    );
    expect(t.state.stats.blocked.file_edits).toBe(1);
    expect(t.state.observed.at(-1)).toMatchObject({ tool: "write_file", rule: "file_edits", count: 12 });
  });

  it("reminds from remindAt, blocks at blockAt, and keeps blocking that file for the rest of the run", () => {
    const t = thread({ escalation: { enabled: false } });
    expect(
      fates(
        t,
        times(14, () => write("a.py")),
      ),
    ).toEqual([...ran(7), ...reminded(4), "file_edits", "file_edits", "file_edits"]);
    expect(t.state.fileEdits).toEqual([{ path: "a.py", writes: 11, rewrites: 11 }]);
  });

  it("failed and blocked writes do not count", () => {
    const t = thread({ escalation: { enabled: false, sameErrorThreshold: 0 } });
    expect(
      fates(
        t,
        times(14, () => write("a.py")),
        false,
      ),
    ).toEqual(ran(14));
    expect(t.state.fileEdits ?? []).toEqual([]);
    expect(
      fates(
        t,
        times(7, () => write("a.py")),
      ),
    ).toEqual(ran(7));
    expect(t.state.fileEdits).toEqual([{ path: "a.py", writes: 7, rewrites: 7 }]);
  });

  it("counts one per call per file: a command writing two files counts once for each", () => {
    const t = thread({ rules: { root: "/repo" } });
    t.respond([sh("echo x > a.py && echo y > b.py && echo z >> a.py")]);
    expect(t.state.fileEdits).toEqual([
      { path: "/repo/a.py", writes: 1, rewrites: 1 },
      { path: "/repo/b.py", writes: 1, rewrites: 1 },
    ]);
    // sed -i and write_to_file of one file are one count; write_to_file rewrites it whole, sed -i and edit_file do not.
    t.respond([sh("sed -i 's/a/b/' a.py")]);
    t.respond([write("a.py", "new", "write_to_file")]);
    t.respond([write("/repo/a.py", "newer", "edit_file")]);
    expect(t.state.fileEdits).toEqual([
      { path: "/repo/b.py", writes: 1, rewrites: 1 },
      { path: "/repo/a.py", writes: 4, rewrites: 2 },
    ]);
  });

  it("a command it cannot read, or a read, counts nothing", () => {
    const t = thread({ rules: { root: "/repo" } });
    t.respond([sh("python fix.py")]);
    t.respond([{ name: "read_file", args: { path: "a.py" }, id: "r1" }]);
    expect(t.state.fileEdits ?? []).toEqual([]);
  });

  it("counts per run: a new person's message starts afresh; runBoundary none keeps counting", () => {
    const t = thread();
    expect(
      fates(
        t,
        times(7, () => write("a.py")),
      ),
    ).toEqual(ran(7));
    t.newRun("h1");
    expect(
      fates(
        t,
        times(7, () => write("a.py")),
      ),
    ).toEqual(ran(7));
    expect(t.state.fileEdits).toEqual([{ path: "a.py", writes: 7, rewrites: 7 }]);

    const one = thread({ memory: { runBoundary: "none" } });
    fates(
      one,
      times(7, () => write("a.py")),
    );
    one.newRun("h1");
    expect(
      fates(
        one,
        times(5, () => write("a.py")),
      ),
    ).toEqual([...reminded(4), "file_edits"]);
  });

  it("a person's reset (forgive) lifts the file limits", () => {
    const t = thread();
    fates(
      t,
      times(12, () => write("a.py")),
    );
    t.state = reduceToolGuard(t.state, [{ type: "forgive" }]);
    expect(t.state.fileEdits).toEqual([]);
    expect(fates(t, [write("a.py")])).toEqual(["ran"]);
  });

  it("keeps at most FILE_EDITS_LIMIT files, the most recently written last", () => {
    const t = thread();
    fates(
      t,
      times(60, (i) => write(`f${i}.py`)),
    );
    expect(t.state.fileEdits).toHaveLength(FILE_EDITS_LIMIT);
    expect(t.state.fileEdits?.at(0)?.path).toBe("f10.py");
    expect(t.state.fileEdits?.at(-1)?.path).toBe("f59.py");
  });

  it("loads a state saved before the rule existed (no fileEdits), and round-trips through JSON", () => {
    const t = thread();
    fates(
      t,
      times(3, () => write("a.py")),
    );
    const { fileEdits, ...old } = JSON.parse(JSON.stringify(t.state)) as ToolGuardState;
    expect(fileEdits).toEqual([{ path: "a.py", writes: 3, rewrites: 3 }]);
    t.state = old as ToolGuardState;
    expect(
      fates(
        t,
        times(9, () => write("a.py")),
      ),
    ).toEqual([...ran(7), ...reminded(2)]);
    const saved = JSON.parse(JSON.stringify(t.state)) as ToolGuardState;
    expect(saved.fileEdits).toEqual([{ path: "a.py", writes: 9, rewrites: 9 }]);
    t.state = saved;
    expect(
      fates(
        t,
        times(3, () => write("a.py")),
      ),
    ).toEqual([...reminded(2), "file_edits"]);
  });

  it("two writes of one file in one response: the second sees the first", () => {
    const t = thread();
    fates(
      t,
      times(6, () => write("a.py")),
    );
    const turn = { id: "m-par", text: "", calls: [write("a.py"), write("a.py")], run: "h0" };
    const decisions = planTurn(t.state, turn, t.options).decisions;
    expect(decisions.map((d) => d.fileEdits?.writes)).toEqual([undefined, 8]);
    expect(decisions[1]?.fileEdits?.reminder).toBe(fileEditsReminder("a.py", 8, 12));
  });

  it("with the defaults: edits reminded from the 8th write, the 25th blocked; rewrites blocked at the 12th", () => {
    const t = thread({ rules: { fileEdits: {} } });
    const edit = () => write("a.py", `v${++ids}`, "edit_file");
    expect(fates(t, times(25, edit))).toEqual([...ran(7), ...reminded(17), "file_edits"]);
    const rw = thread({ rules: { fileEdits: {} } });
    expect(
      fates(
        rw,
        times(13, () => write("a.py")),
      ),
    ).toEqual([...ran(7), ...reminded(4), "file_edits", "file_edits"]);
    expect(rw.state.fileEdits).toEqual([{ path: "a.py", writes: 11, rewrites: 11 }]);
  });

  it("whole-file rewrites: counted apart from edits, blocked at blockRewritesAt while edits still run", () => {
    const t = thread({ rules: { root: "/repo", fileEdits: { remindAt: 3, blockAt: 10, blockRewritesAt: 4 } } });
    const rewrites = [write("a.py"), sh("cat > a.py <<'EOF'\nx = 1\nEOF"), sh("cp a.bak a.py")];
    expect(fates(t, [...rewrites, sh("sed -i 's/1/2/' a.py"), sh("echo y >> a.py")])).toEqual([
      "ran",
      "ran",
      "ran+reminder",
      "ran+reminder",
      "ran+reminder",
    ]);
    expect(t.state.fileEdits).toEqual([{ path: "/repo/a.py", writes: 5, rewrites: 3 }]);
    const [blocked] = t.respond([sh("tee a.py < a.bak")]) as [ToolCallDecision];
    expect(blocked.rule).toBe("file_edits");
    expect(blocked.fileEdits).toMatchObject({ writes: 6, rewrites: 4, blockedBy: "rewrites" });
    expect(blocked.message).toMatch(/^⚠️ FILE REWRITTEN TOO OFTEN: 'a\.py' was already rewritten whole 3 times/);
    expect(blocked.content).toContain("(the 4th rewrite is blocked)");
    expect(blocked.content).toContain("a targeted edit of one part still runs");
    // An edit of the file still runs (with its reminder) until blockAt; tee -a appends, and is no rewrite.
    expect(fates(t, [sh("sed -i 's/2/3/' a.py"), sh("tee -a a.py < a.bak")])).toEqual(["ran+reminder", "ran+reminder"]);
    const [reminded] = t.respond([sh("sed -i 's/3/4/' a.py")]) as [ToolCallDecision];
    expect(reminded.fileEdits?.reminder).toBe(fileEditsReminder("a.py", 8, 10));
    const rewrite = planTurn(t.state, { id: "m-rw", text: "", calls: [write("a.py")], run: "h0" }, t.options);
    expect(rewrite.decisions[0]?.fileEdits?.blockedBy).toBe("rewrites");
  });

  it("exemptions: tools.<name>.fileEdits false counts nothing; exempt counts but never blocks that tool", () => {
    const off = thread({ tools: { write_file: { fileEdits: false } } });
    expect(
      fates(
        off,
        times(14, () => write("a.py")),
      ),
    ).toEqual(ran(14));
    expect(off.state.fileEdits ?? []).toEqual([]);

    const exempt = thread({ tools: { write_file: { exempt: true } } });
    expect(
      fates(
        exempt,
        times(14, () => write("a.py")),
      ),
    ).toEqual(ran(14));
    // Its calls are still recorded: another tool's write of the file is judged with them.
    expect(fates(exempt, [write("a.py", "x", "edit_file")])).toEqual(["file_edits"]);
  });

  it("observe mode sends no reminder and blocks nothing, and records the would-be block", () => {
    const t = thread({ mode: "observe" });
    expect(
      fates(
        t,
        times(13, () => write("a.py")),
      ),
    ).toEqual(ran(13));
    expect(t.state.stats.observed.file_edits).toBe(2);
  });

  it("the per-run off switch: nothing reminded or blocked, the writes still counted", () => {
    const options = resolveToolGuardOptions();
    let state = emptyToolGuardState();
    for (let i = 0; i < 13; i += 1) {
      const plan = planTurn(state, { id: `m${i}`, text: "", calls: [write("a.py")] }, options, { disabled: true });
      expect(plan.decisions[0]?.allowed).toBe(true);
      expect(plan.decisions[0]?.fileEdits).toBeUndefined();
      state = reduceToolGuard(state, commitTurn(plan, [{ ok: true, text: "ok" }], options));
    }
    expect(state.fileEdits).toEqual([{ path: "a.py", writes: 13, rewrites: 13 }]);
  });

  it("escalates: blocked writes of the file with new content each time add up strikes", () => {
    const t = thread();
    fates(
      t,
      times(11, () => write("a.py")),
    );
    const levels = times(3, () => write("a.py")).map((c) => t.respond([c])[0]?.escalation);
    expect(levels).toEqual([1, 2, 3]);
  });

  it("the stream events: a near-miss with the reminder, a blocked event with the rule", () => {
    const t = thread();
    const decided = times(12, () => write("a.py")).map((c) => t.respond([c])[0] as ToolCallDecision);
    const events = turnStreamEvents(decided);
    expect(events.map((e) => `${e.kind}:${e.rule}:${e.count}`)).toEqual([
      "near-miss:file_edits:8",
      "near-miss:file_edits:9",
      "near-miss:file_edits:10",
      "near-miss:file_edits:11",
      "blocked:file_edits:12",
    ]);
    expect(events[0]?.message).toMatch(/^\[FILE EDITED OFTEN\] This was the 8th write of 'a\.py'/);
  });

  it("a custom block message gets the file and the count", () => {
    const t = thread({ feedback: { messages: { file_edits: ({ path, count }) => `No: ${path} #${count}.` } } });
    const [d] = times(12, () => write("a.py"))
      .map((c) => t.respond([c])[0])
      .slice(-1);
    expect(d?.message).toBe("No: a.py #12.");
    expect(d?.content).toMatch(/^No: a\.py #12\.\n\n\[FILE EDIT BLOCKED\]\nTool: write_file\nFile: a\.py\n/);
  });
});

describe("rules.fileEdits options", () => {
  it("defaults to remind at 8, block at 25; false switches it off", () => {
    expect(resolveToolGuardOptions().rules.fileEdits).toEqual({ remindAt: 8, blockAt: 25, blockRewritesAt: 12 });
    expect(resolveToolGuardOptions({ rules: { fileEdits: false } }).rules.fileEdits).toBe(false);
    expect(resolveToolGuardOptions({ rules: { fileEdits: { blockAt: 20 } } }).rules.fileEdits).toEqual({
      remindAt: 8,
      blockAt: 20,
      blockRewritesAt: 12,
    });
    expect(resolveToolGuardOptions({ rules: { fileEdits: { remindAt: false, blockAt: 3 } } }).rules.fileEdits).toEqual({
      remindAt: false,
      blockAt: 3,
      blockRewritesAt: 12,
    });
  });

  it("rejects bad limits with the field's name", () => {
    const bad: [unknown, RegExp][] = [
      [{ remindAt: 12, blockAt: 12 }, /rules\.fileEdits\.remindAt: remindAt \(12\) must be below blockAt \(12\)/],
      [{ blockAt: 6 }, /rules\.fileEdits\.remindAt: remindAt \(8\) must be below blockAt \(6\)/],
      [{ remindAt: 30 }, /rules\.fileEdits\.remindAt: remindAt \(30\) must be below blockAt \(25\)/],
      [{ blockAt: 0 }, /rules\.fileEdits\.blockAt/],
      [{ remindAt: 2.5 }, /rules\.fileEdits\.remindAt: expected an integer ≥ 1, or false/],
      [{ remindAt: 0 }, /rules\.fileEdits\.remindAt: expected an integer ≥ 1, or false/],
      [{ blockAt: 3.5 }, /rules\.fileEdits\.blockAt/],
      [{ every: 3 }, /rules\.fileEdits: Unrecognized key/],
      [{ blockRewritesAt: 0 }, /rules\.fileEdits\.blockRewritesAt: expected an integer ≥ 1, or false/],
      [true, /rules\.fileEdits: expected \{ remindAt, blockAt, blockRewritesAt \} or false/],
    ];
    for (const [fileEdits, message] of bad) {
      const build = () => resolveToolGuardOptions({ rules: { fileEdits } } as ToolGuardOptions);
      expect(build).toThrow(GuardOptionsError);
      expect(build).toThrow(message);
    }
    expect(() => resolveToolGuardOptions({ fileEdits: false } as ToolGuardOptions)).toThrow(/fileEdits/);
    expect(() =>
      resolveToolGuardOptions({ tools: { bash: { fileEdits: "no" } } } as unknown as ToolGuardOptions),
    ).toThrow(/tools\.bash\.fileEdits/);
  });
});

describe("the file as the model reads it (issue 45, item 6)", () => {
  it("with a root, the reminder and the block name the file inside it, never the root's absolute path", () => {
    const t = thread({ rules: { root: "/srv/project-root" } });
    const decisions = times(12, () => write("src/game.py")).map((c) => t.respond([c])[0] as ToolCallDecision);
    const reminder = decisions[7]?.fileEdits?.reminder ?? "";
    expect(reminder).toContain("'src/game.py'");
    const block = decisions[11] as ToolCallDecision;
    expect(block.allowed).toBe(false);
    expect(block.message).toContain("'src/game.py'");
    for (const d of decisions) {
      expect(`${d.message ?? ""}${d.content ?? ""}${d.fileEdits?.reminder ?? ""}`).not.toContain("/srv/project-root");
    }
  });
});
