/**
 * The file-edits rule end to end (issue 33, item 5): one file written again and again in one run gets a reminder
 * after its result from the 8th write; the 12th rewrite of its whole content is blocked (the 25th write of any kind),
 * with escalation; other files, a new run, an exempted tool and shell writes the classifier understands. Each script
 * runs through a createReactAgent with `GuardedToolNode` + `escalationHook`, a createAgent with `guardMiddleware`, and
 * `replayGuards` over its recording; a thread of two runs is two invokes on one checkpointer (two person's messages
 * in the recording): the counts are per run, or go on across the runs with `memory.runBoundary` "none".
 */
import { describe, expect, it } from "vitest";
import { type ReplayStep, replayGuards } from "../../src/replay/index.js";
import { ADAPTERS, type Adapter, type FakeTool, runScenario, runThread, step, type ThreadSettings } from "./support.js";

const writeFile: FakeTool = {
  name: "write_file",
  respond: (_n, args) => `Wrote ${String(args.content).length} characters to ${String(args.path)}.`,
};
const writeToFile: FakeTool = { ...writeFile, name: "write_to_file" };
const editFile: FakeTool = { name: "edit_file", respond: (_n, args) => `Edited ${String(args.path)}.` };
const bash: FakeTool = { name: "bash", respond: () => "" }; // `sed -i` prints nothing

/** The i-th rewrite of `path`: new content every time. */
const rewrite = (i: number, path = "game.py", tool = "write_file") =>
  step(tool, { path, content: `print(${i})\n`.repeat(i) });
const rewrites = (n: number, path?: string) => Array.from({ length: n }, (_, i) => rewrite(i + 1, path));
/** `n` rewrites of game.py from the `first`-th: content no earlier rewrite had. */
const rewritesFrom = (first: number, n: number) => Array.from({ length: n }, (_, i) => rewrite(first + i));
const ran = (n: number) => Array.from({ length: n }, () => "ran");
const REMINDER = "[FILE EDITED OFTEN]";
/** The issue's limits for every write (the defaults block the 12th rewrite and the 25th write of any kind). */
const ISSUE = { rules: { fileEdits: { remindAt: 8, blockAt: 12 } } };

describe.each(ADAPTERS)("file edits through %s", (adapter: Adapter) => {
  it("one file rewritten 14 times (defaults): a reminder from the 8th write, the 12th blocked, a stop", async () => {
    const r = await runScenario(adapter, [writeFile], rewrites(14));
    expect(r.outcomes).toEqual([...ran(11), "file_edits@1", "file_edits@2", "stop"]);
    expect(r.ran.write_file).toBe(11);
    // No reminder before the 8th write; from the 8th to the 11th, after the tool's own result.
    for (const answer of r.answers.slice(0, 7)) expect(answer).not.toContain(REMINDER);
    r.answers.slice(7, 11).forEach((answer, i) => {
      expect(answer).toMatch(/^Wrote \d+ characters to game\.py\.\n\n\[FILE EDITED OFTEN\]/);
      expect(answer).toContain(
        `This was the ${8 + i}th write of 'game.py' in this run (the ${8 + i}th of its whole content); the 12th rewrite`,
      );
      expect(answer).toMatch(/read the file once/);
    });
    expect(r.answers[11]).toMatch(/^⚠️ FILE REWRITTEN TOO OFTEN: 'game\.py' was already rewritten whole 11 times/);
    expect(r.answers[11]).toContain("[FILE EDIT BLOCKED]");
    expect(r.answers[11]).toContain("What will you do differently?");
    expect(r.answers[12]).toContain("[A] Read 'game.py' once as it is now");
    // The live runs stop at level 3 before the third block is recorded; replay records it with the stop.
    expect(r.toolGuard.stats.blocked.file_edits).toBeGreaterThanOrEqual(2);
    expect(r.toolGuard.fileEdits).toEqual([{ path: "game.py", writes: 11, rewrites: 11 }]);
  });

  it("12 rewrites of one file (the issue's limits): reminders on the 8th to the 11th, the 12th blocked with a strike", async () => {
    const r = await runScenario(adapter, [writeFile], rewrites(12), ISSUE);
    expect(r.outcomes).toEqual([...ran(11), "file_edits@1"]);
    expect(r.answers.map((a) => a.includes(REMINDER))).toEqual([
      ...Array.from({ length: 7 }, () => false),
      ...Array.from({ length: 4 }, () => true),
      false,
    ]);
    expect(r.strikes).toBe(1);
    if (adapter !== "replayGuards") {
      // What the blocked call's ToolMessage carries (the replay has no messages: its outcome and strikes are above).
      expect(r.guards?.[11]).toMatchObject({ blocked: true, rule: "file_edits", count: 12, escalation: 1, strikes: 1 });
    }
    expect(r.toolGuard.fileEdits).toEqual([{ path: "game.py", writes: 11, rewrites: 11 }]);
  });

  it("a new person's message starts the count afresh: 7 rewrites in each of two runs, no reminder", async () => {
    const r = await runThread(adapter, [writeFile], [rewrites(7), rewritesFrom(8, 7)], ISSUE);
    expect(r.outcomes).toEqual(ran(14));
    expect(r.answers).toHaveLength(14);
    for (const answer of r.answers) expect(answer).not.toContain(REMINDER);
    expect(r.toolGuard.fileEdits).toEqual([{ path: "game.py", writes: 7, rewrites: 7 }]);
  });

  // createReactAgent in both its versions (v2 runs each tool call in its own Send task).
  const forms: { form: string; settings: ThreadSettings }[] =
    adapter === "createReactAgent"
      ? [
          { form: "version v1", settings: { reactVersion: "v1" } },
          { form: "version v2", settings: { reactVersion: "v2" } },
        ]
      : [{ form: "its one form", settings: {} }];
  it.each(forms)(
    "with runBoundary none, the count goes on across the runs: 7 then 5 rewrites, reminders, then a block ($form)",
    async ({ settings }) => {
      const runs = [rewrites(7), rewritesFrom(8, 5)];
      const options = { ...ISSUE, memory: { runBoundary: "none" as const } };
      const r = await runThread(adapter, [writeFile], runs, options, settings);
      expect(r.outcomes).toEqual([...ran(11), "file_edits@1"]);
      const second = r.answers.slice(7);
      expect(second.slice(0, 4).every((a) => a.includes(REMINDER))).toBe(true);
      expect(second[0]).toMatch(/^Wrote \d+ characters to game\.py\.\n\n\[FILE EDITED OFTEN\] This was the 8th write/);
      expect(second[4]).toMatch(/^⚠️ FILE EDITED TOO OFTEN/);
      expect(r.toolGuard.stats.blocked.file_edits).toBe(1);
      if (adapter !== "replayGuards") {
        // The guard log of the thread (the replay keeps none).
        expect(r.guardLog?.counts).toMatchObject({ "near-miss": 4, blocked: 1 });
        expect(r.guardLog?.recent.filter((e) => e.rule === "file_edits").map((e) => e.kind)).toEqual([
          "near-miss",
          "near-miss",
          "near-miss",
          "near-miss",
          "blocked",
        ]);
      }
    },
  );

  it("one file edited in place 25 times (defaults): a reminder from the 8th write, the 25th blocked", async () => {
    const edits = Array.from({ length: 25 }, (_, i) =>
      step("edit_file", { path: "game.py", old_string: `v${i}`, new_string: `v${i + 1}` }),
    );
    const r = await runScenario(adapter, [editFile], edits);
    expect(r.outcomes).toEqual([...ran(24), "file_edits@1"]);
    expect(r.answers.map((a) => a.includes(REMINDER))).toEqual([
      ...Array.from({ length: 7 }, () => false),
      ...Array.from({ length: 17 }, () => true),
      false,
    ]);
    expect(r.answers[23]).toContain("This was the 24th write of 'game.py' in this run; the 25th and later ones");
  });

  it("14 different files written once each: nothing blocked, no reminder", async () => {
    const script = Array.from({ length: 14 }, (_, i) => rewrite(1, `src/m${i}.py`));
    const r = await runScenario(adapter, [writeFile], script, ISSUE);
    expect(r.outcomes).toEqual(ran(14));
    for (const answer of r.answers) expect(answer).not.toContain(REMINDER);
    expect(r.toolGuard.fileEdits).toHaveLength(14);
  });

  it("other files are unaffected by one file's block", async () => {
    const script = [...rewrites(12), rewrite(1, "README.md"), rewrite(2, "README.md")];
    const r = await runScenario(adapter, [writeFile], script, ISSUE);
    expect(r.outcomes).toEqual([...ran(11), "file_edits@1", "ran", "ran"]);
  });

  it("sed -i on x.py counts like write_to_file of x.py (with rules.root, the path is known)", async () => {
    const sed = (i: number) => step("bash", { command: `sed -i 's/old${i}/new${i}/' x.py` });
    const script = [
      ...Array.from({ length: 6 }, (_, i) => sed(i)),
      ...rewrites(6, "x.py").map((c) => ({ ...c, name: "write_to_file" })),
    ];
    const r = await runScenario(adapter, [bash, writeToFile], script, { rules: { ...ISSUE.rules, root: "/repo" } });
    expect(r.outcomes).toEqual([...ran(11), "file_edits@1"]);
    expect(r.answers[7]).toContain("This was the 8th write of 'x.py'");

    const seds = await runScenario(
      adapter,
      [bash],
      Array.from({ length: 12 }, (_, i) => sed(i)),
      {
        rules: { ...ISSUE.rules, root: "/repo" },
      },
    );
    expect(seds.outcomes).toEqual([...ran(11), "file_edits@1"]);
  });

  it("without rules.root a shell command's relative paths are not known: sed -i is not counted", async () => {
    const script = Array.from({ length: 14 }, (_, i) => step("bash", { command: `sed -i 's/a${i}/b${i}/' x.py` }));
    const r = await runScenario(adapter, [bash], script, ISSUE);
    expect(r.outcomes).toEqual(ran(14));
    expect(r.toolGuard.fileEdits ?? []).toEqual([]);
  });

  it("the exemptions: tools.<name>.fileEdits false, exempt, rules.fileEdits false", async () => {
    for (const options of [
      { ...ISSUE, tools: { write_file: { fileEdits: false } } },
      { ...ISSUE, tools: { write_file: { exempt: true } } },
      { rules: { fileEdits: false as const } },
    ]) {
      const r = await runScenario(adapter, [writeFile], rewrites(14), options);
      expect(r.outcomes).toEqual(ran(14));
      for (const answer of r.answers) expect(answer).not.toContain(REMINDER);
    }
  });

  it("the limits are options: remindAt 2, blockAt 4; remindAt false", async () => {
    const r = await runScenario(adapter, [writeFile], rewrites(4), {
      rules: { fileEdits: { remindAt: 2, blockAt: 4 } },
    });
    expect(r.outcomes).toEqual([...ran(3), "file_edits@1"]);
    expect(r.answers.map((a) => a.includes(REMINDER))).toEqual([false, true, true, false]);
    const quiet = await runScenario(adapter, [writeFile], rewrites(4), {
      rules: { fileEdits: { remindAt: false, blockAt: 4 } },
    });
    expect(quiet.outcomes).toEqual([...ran(3), "file_edits@1"]);
    for (const answer of quiet.answers) expect(answer).not.toContain(REMINDER);
  });
});

describe("file edits: the adapters agree", () => {
  it("every adapter gives the same outcomes and answers for a file rewritten 14 times", async () => {
    const [first, ...others] = await Promise.all(ADAPTERS.map((a) => runScenario(a, [writeFile], rewrites(14), ISSUE)));
    for (const other of others) {
      expect(other.outcomes).toEqual(first?.outcomes);
      expect(other.answers).toEqual(first?.answers);
    }
  });

  it("replay of a recorded thread: each person's message starts a new run and the count afresh", () => {
    const steps: ReplayStep[] = [];
    for (const session of [1, 2]) {
      steps.push({ role: "user", text: `Request ${session}.` });
      for (const c of rewrites(7)) {
        steps.push({ role: "assistant", text: "", tool_calls: [{ name: c.name, args: c.args }] });
        steps.push({ role: "tool", name: c.name, ok: true, text: writeFile.respond(1, c.args) });
      }
    }
    const run = { id: "two-runs", steps };
    const fresh = replayGuards(run);
    expect(fresh.decisions.every((d) => d.action === "allow" && !d.content.includes(REMINDER))).toBe(true);
    expect(fresh.state.fileEdits).toEqual([{ path: "game.py", writes: 7, rewrites: 7 }]);
    const one = replayGuards(run, { ...ISSUE, memory: { runBoundary: "none" } });
    expect(one.decisions.map((d) => d.action)).toEqual([...Array(11).fill("allow"), "block", "block", "stop"]);
    expect(one.decisions.slice(7, 11).every((d) => d.content.includes(REMINDER))).toBe(true);
    expect(one.totals.blocked.file_edits).toBe(2);
  });
});
