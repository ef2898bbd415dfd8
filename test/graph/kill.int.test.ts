/**
 * A process killed with `kill -9` in the middle of a turn, and the thread resumed from its SQLite checkpoints in a
 * new process (`agent.invoke(null, config)`): every call gets the decision an uninterrupted run gives it. The tool
 * that was running when the process died runs again (at-least-once), and so, in createReactAgent v1, do the calls
 * of the same AI message that had already run (the whole tool node is one task); in v2 each call is its own task and
 * a finished one is not re-run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolGuardState } from "../../src/index.js";
import { buildKillAgent, KILL_CALL_IDS, type KillOutcome, killOutcome } from "../fixtures/kill-agent.js";

const root = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-kill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Version = "v1" | "v2";

/** Starts the fixture in its own Node process. */
function fixture(args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "test/fixtures/kill-turn.ts", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Waits for `file`; fails if `child` exits first. */
async function appears(file: string, child: ChildProcess, timeoutMs = 100_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (child.exitCode !== null) throw new Error(`the fixture exited (${child.exitCode}) before ${file}`);
    if (Date.now() > until) throw new Error(`no ${file} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** How many times each call ran, from the log its tools append to. */
function runsOf(logFile: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const id of readFileSync(logFile, "utf8").split("\n").filter(Boolean)) runs.set(id, (runs.get(id) ?? 0) + 1);
  return runs;
}

/** The uninterrupted run of the same script, on its own SQLite file, by version. */
const uninterrupted = new Map<Version, { outcome: KillOutcome; runs: Map<string, number> }>();

beforeAll(async () => {
  for (const version of ["v1", "v2"] as const) {
    const logFile = join(dir, `uninterrupted-${version}.log`);
    const checkpointer = SqliteSaver.fromConnString(join(dir, `uninterrupted-${version}.sqlite`));
    const agent = buildKillAgent({ checkpointer, logFile, version });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "Work on the project." }] },
      { configurable: { thread_id: "t" }, recursionLimit: 200 },
    );
    checkpointer.db.close();
    uninterrupted.set(version, {
      outcome: killOutcome({ messages: out.messages, toolGuard: out.toolGuard as ToolGuardState }),
      runs: runsOf(logFile),
    });
  }
});

/**
 * Kill points: the call that blocks, and whether it blocks after its side effect (it has run once when killed) or
 * before it. k2 and k6 are responses with two parallel calls, k4_0 is the write, k9_1 the last call.
 */
const trials: [Version, string, "after" | "before"][] = [
  ["v1", "k0_0", "after"],
  ["v1", "k2_1", "after"],
  ["v1", "k4_0", "before"],
  ["v1", "k6_0", "after"],
  ["v1", "k9_1", "after"],
  ["v2", "k2_1", "after"],
  ["v2", "k6_1", "before"],
];

describe("kill -9 in the middle of a turn, resumed from SQLite in a new process", () => {
  it("the uninterrupted script blocks some calls and runs the others once", () => {
    const { outcome, runs } = uninterrupted.get("v1") ?? expect.unreachable();
    expect(outcome.calls.map(([, fate]) => fate)).toEqual([
      "ran",
      "consecutive",
      "ran",
      "ran",
      "redundant",
      "ran",
      "ran",
      "ran",
      "ran",
      "redundant",
      "ran",
      "ran",
      "ran",
    ]);
    expect(uninterrupted.get("v2")?.outcome).toEqual(outcome);
    for (const [id, fate] of outcome.calls) expect(runs.get(id) ?? 0, id).toBe(fate === "ran" ? 1 : 0);
  });

  it.concurrent.for(trials)(
    "%s, killed at %s (%s its side effect): the same decisions, the killed call at least once",
    { timeout: 120_000 },
    async ([version, killedId, when], { expect, onTestFinished, annotate }) => {
      const db = join(dir, `${version}-${killedId}.sqlite`);
      const logFile = join(dir, `${version}-${killedId}.log`);
      const first = fixture([db, "t", logFile, version, `${when}:${killedId}`]);
      onTestFinished(() => {
        first.kill("SIGKILL"); // if the test failed before killing it (a no-op once it is dead)
      });
      await appears(`${logFile}.blocked`, first);

      // Checkpoints were written before the kill: the last one has the killed call's AI message, unanswered.
      const reader = SqliteSaver.fromConnString(db);
      const checkpoint = await reader.getTuple({ configurable: { thread_id: "t" } });
      reader.db.close();
      const messages = (checkpoint?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
      expect(messages.some((m) => AIMessage.isInstance(m) && m.tool_calls?.some((c) => c.id === killedId))).toBe(true);
      expect(messages.some((m) => ToolMessage.isInstance(m) && m.tool_call_id === killedId)).toBe(false);
      // The answers already saved (v2: a finished call of the same AI message is a pending write of its own task).
      const saved = new Set(
        (checkpoint?.pendingWrites ?? []).flatMap(([, , value]) =>
          [value].flat().flatMap((m) => (ToolMessage.isInstance(m) ? [m.tool_call_id] : [])),
        ),
      );

      first.kill("SIGKILL");
      const [, signal] = await once(first, "exit");
      expect(signal).toBe("SIGKILL");

      // This process (not the one killed) resumes the thread from its last checkpoint.
      const checkpointer = SqliteSaver.fromConnString(db);
      const out = await buildKillAgent({ checkpointer, logFile, version }).invoke(null, {
        configurable: { thread_id: "t" },
        recursionLimit: 200,
      });
      checkpointer.db.close();
      const resumed = killOutcome({ messages: out.messages, toolGuard: out.toolGuard as ToolGuardState });
      const expected = uninterrupted.get(version) ?? expect.unreachable();
      expect(resumed).toEqual(expected.outcome); // same fates, stats, strikes, final answer; a valid history
      expect(resumed.problems).toEqual([]);

      // Side effects: at-least-once for the call that was running, exactly once for the others.
      const runs = runsOf(logFile);
      const siblings = KILL_CALL_IDS.find((ids) => ids.includes(killedId)) ?? [];
      for (const [id] of expected.outcome.calls) {
        const n = runs.get(id) ?? 0;
        const uninterruptedRuns = expected.runs.get(id) ?? 0;
        if (id === killedId) {
          expect(n, id).toBeGreaterThanOrEqual(1);
          expect(n, id).toBeLessThanOrEqual(2);
          expect(n, id).toBe(when === "after" ? 2 : 1); // it ran before the kill only if it blocked after its effect
        } else if (siblings.includes(id) && !saved.has(id)) {
          // Ran in the killed process but its answer was not saved: it runs again. In v1 the whole tool node is one
          // task, so every call of the killed call's AI message is here; in v2 only those still running.
          expect([1, 2], id).toContain(n);
        } else {
          expect(n, id).toBe(uninterruptedRuns);
        }
      }
      const ran = (id: string) =>
        `${id} ${runs.get(id) ?? 0}×${id === killedId ? " (killed)" : saved.has(id) ? " (saved)" : ""}`;
      await annotate(`runs of the killed call's AI message: ${siblings.map(ran).join(", ")}`);
    },
  );
});
