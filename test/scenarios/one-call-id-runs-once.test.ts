/**
 * Issue 63, "Why 6" (a): a tool-call id the model sends twice in one response, with the same call, runs once
 * ("execute each provider tool-call id at most once": Qwen Code #5014; a shell append sent twice under one id ran
 * twice in Codex #27757). The second call is answered with a note pointing at the first one's answer: not run, no
 * block, no strike, counted as served. The same id with other arguments is two calls, and both run. Through
 * createReactAgent with `GuardedToolNode`, createAgent with `guardMiddleware` and `replayGuards`.
 */
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScriptedToolCall } from "../../src/testing/index.js";
import { sameIdNote } from "../../src/tool-calls/core/texts.js";
import { ADAPTERS, type FakeTool, runScenario, type ScenarioResult } from "./support.js";

/** A shell whose `echo x >> log` really appends a line to `log` in a folder of its own. */
function appendingShell(): { tool: FakeTool; lines: () => string[] } {
  const log = join(mkdtempSync(join(tmpdir(), "same-id-")), "log");
  appendFileSync(log, "");
  const tool: FakeTool = {
    name: "bash",
    respond: (_n, args) => {
      const word = /^echo (\S+) >> log$/.exec(String(args.command))?.[1];
      if (word !== undefined) appendFileSync(log, `${word}\n`);
      return "";
    },
  };
  return { tool, lines: () => readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

const append = (word: string, id: string): ScriptedToolCall => ({
  name: "bash",
  args: { command: `echo ${word} >> log` },
  id,
});

const counters = (r: ScenarioResult) => ({
  served: r.toolGuard.stats.served ?? 0,
  blocked: Object.values(r.toolGuard.stats.blocked).reduce((a, b) => a + b, 0),
  strikes: r.strikes,
});

describe.each(ADAPTERS)("one call id twice in one response, through %s", (adapter) => {
  it("a shell append sent twice under id c1 runs once: the log holds one line, the 2nd call gets a note", async () => {
    const shell = appendingShell();
    const r = await runScenario(adapter, [shell.tool], [[append("x", "c1"), append("x", "c1")]]);
    expect(r.outcomes).toEqual(["ran", "served"]);
    expect(r.ran.bash).toBe(1);
    expect(r.answers[1]).toBe(sameIdNote("c1"));
    expect(counters(r)).toEqual({ served: 1, blocked: 0, strikes: 0 });
    if (adapter !== "replayGuards") {
      expect(shell.lines()).toEqual(["x"]);
      expect(r.guardLog?.counts.blocked).toBeUndefined();
    }
  });

  it("the same id with other arguments is two calls: both run", async () => {
    const shell = appendingShell();
    const r = await runScenario(adapter, [shell.tool], [[append("x", "c1"), append("y", "c1")]]);
    expect(r.outcomes).toEqual(["ran", "ran"]);
    expect(r.ran.bash).toBe(2);
    if (adapter !== "replayGuards") expect(shell.lines()).toEqual(["x", "y"]);
  });
});
